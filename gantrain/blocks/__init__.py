"""GAN building blocks on top of the engine: losses, penalties, DiffAugment, spectral norm,
the image history pool, latent sampling and failure-sign warnings."""
