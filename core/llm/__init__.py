"""The chat model: the client, structured output, the admission queue, the embedded llama.cpp server."""
