"""The review of manipulated awareness instances (the paper's verification step): the
annotation tool (``toolbench.aware.annotate``) deciding accept, or reject with reasons, and the
export of those decisions into the dataset. Its ``templates`` and ``static`` folders hold the
annotation server's pages."""
