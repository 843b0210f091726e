"""What the evals, the benchmarks and the tests share to run the product: the worker process beside a
stack, and the hostile content cases with the code that runs them through the agents."""
