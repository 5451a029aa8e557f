"""What a session keeps and its address bar carries: kept values, the URL round trip, a link's lesson options, partial reruns."""
