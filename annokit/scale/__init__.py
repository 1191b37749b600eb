"""The Dask engine (optional: pip install 'annokit[dask]')."""
