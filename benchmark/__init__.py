"""The SEAM benchmark: six licensed sources, 300 clusters, six matched conditions."""
