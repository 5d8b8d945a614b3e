"""Pictures for the canvas: an upload of a phone's photo through POST /api/v1/images (``images.py``)."""
