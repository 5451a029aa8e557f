"""deploy/kubernetes/: every manifest is valid for a pinned Kubernetes version (kubernetes-validate's schemas, strict:
no property the API does not know), and says what deploy/README.md and the measurements say. Running the app's
Deployment is tests/test_containers.py's (``podman kube play``)."""

from __future__ import annotations

import copy

import pytest
import yaml

from harness.local_cluster import ROOT

KUBE = ROOT / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.33.0"  # a release the managed services still run; the schemas ship inside the package
kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (requirements-dev.txt)")


def manifests() -> dict[str, list[dict]]:
    """file name -> its documents, for every manifest the kustomization lists."""
    listed = yaml.safe_load((KUBE / "kustomization.yaml").read_text())["resources"]
    return {name: [d for d in yaml.safe_load_all((KUBE / name).read_text()) if d] for name in listed}


def by_kind() -> dict[str, dict]:
    out = {}
    for docs in manifests().values():
        for d in docs:
            out[f"{d['kind']}/{d['metadata']['name']}"] = d
    return out


def validate(doc: dict) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_kustomization_lists_every_manifest():
    on_disk = {p.name for p in KUBE.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(manifests()) == on_disk


@pytest.mark.parametrize("name", sorted(p.name for p in KUBE.glob("*.yaml") if p.name != "kustomization.yaml"))
def test_every_manifest_is_valid_for_the_pinned_kubernetes(name):
    for doc in manifests()[name]:
        validate(doc)


def test_the_validator_rejects_a_misspelt_field():
    doc = copy.deepcopy(by_kind()["Deployment/attention-explorer"])
    doc["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {"httpGet": {"path": "/", "port": 8501}}
    with pytest.raises(kubernetes_validate.ValidationError, match="readinesProbe"):
        validate(doc)


def test_the_deployment_probes_health_runs_one_thread_and_reaches_redis():
    kinds = by_kind()
    pod = kinds["Deployment/attention-explorer"]["spec"]["template"]["spec"]
    (app,) = pod["containers"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert app[probe]["httpGet"]["path"] == "/_stcore/health", probe
    env = {e["name"]: e["value"] for e in app["env"]}
    assert env["OMP_NUM_THREADS"] == "1"
    redis_service = kinds["Service/attention-explorer-redis"]
    assert env["AEXP_REDIS_URL"] == f"redis://{redis_service['metadata']['name']}:6379/0"
    assert app["resources"]["limits"]["cpu"] == "1", "one core per replica: the capacity per replica assumes it"
    assert app["resources"]["limits"]["memory"] == "1536Mi", "the limit of compose.yaml (APP_MEMORY=1.5g)"
    assert app["securityContext"]["readOnlyRootFilesystem"] and pod["securityContext"]["runAsNonRoot"]
    assert {m["mountPath"] for m in app["volumeMounts"]} == {"/tmp"}


def test_the_ingress_keeps_a_browser_on_its_pod_by_cookie_with_long_websockets():
    ingress = by_kind()["Ingress/attention-explorer"]
    notes = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "affinity"] == "cookie" and notes[prefix + "affinity-mode"] == "persistent"
    assert int(notes[prefix + "proxy-read-timeout"]) >= 3600 and int(notes[prefix + "proxy-send-timeout"]) >= 3600
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert "sessionAffinity" not in by_kind()["Service/attention-explorer"]["spec"], "ClientIP would pin a NAT"


def test_redis_persists_and_the_scaling_objects_name_the_deployment():
    kinds = by_kind()
    redis = kinds["StatefulSet/attention-explorer-redis"]["spec"]
    args = redis["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--appendonly") + 1] == "yes" and "noeviction" in args
    assert redis["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    hpa = kinds["HorizontalPodAutoscaler/attention-explorer"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == "attention-explorer"
    assert hpa["metrics"][0]["resource"]["name"] == "cpu"
    pdb = kinds["PodDisruptionBudget/attention-explorer"]["spec"]
    labels = kinds["Deployment/attention-explorer"]["spec"]["template"]["metadata"]["labels"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    assert hpa["minReplicas"] >= 2 and hpa["maxReplicas"] >= hpa["minReplicas"]
