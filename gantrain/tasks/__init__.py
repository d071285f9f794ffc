"""Runs of the tasks other than the plain GAN (CycleGAN, ALI, actor-critic), one module each."""
