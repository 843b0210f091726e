"""What wraps every request: body limits, rate limits, request ids and the error answers."""
