"""The functions of neural networks: activations, convolution, pooling, normalisation,
losses, attention, padding and image functions."""
