"""Runs any agent for a caller (a request or a job): admission, the graph, error mapping, audit and
history, streamed or not. It sits above the agent packages, which never import each other."""
