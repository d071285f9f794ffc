"""Paper-comparable metrics on the FID Inception network (pytorch-fid's weights, converted):
weights and their provenance, preprocessing, the batched extractor, IS and cached real
statistics. Heavy pieces are imported from their modules, not here."""
