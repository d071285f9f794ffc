"""Reference architectures, loaded by import path (``models.mlp:Generator``) like a user's own."""
