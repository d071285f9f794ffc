"""Pictures of samples: image grids, GIFs and 2D scatter plots (numpy and Pillow only)."""
