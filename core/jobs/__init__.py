"""Job specs shared by every producer (the API, the agent-run service, the workers) and the workers."""
