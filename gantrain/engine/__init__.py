"""The engine: players with their own compiled steps, gradient transforms, optimizers, the
alternating schedule, the loop, hooks, checkpoints, EMA and sampling. It knows nothing about
GANs or configs; everything above it is built from these pieces."""
