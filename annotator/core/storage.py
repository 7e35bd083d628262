"""Static files storage for production (STATIC_MANIFEST=true)."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ManifestStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's hashed, compressed storage, which also rewrites the relative
    imports between ES modules (js/label.js -> js/label/*.js) to their hashed
    names: otherwise a hashed, cached-forever module would import the unhashed
    file of whatever version is deployed now. The import graph must stay
    acyclic and shallower than ``max_post_process_passes`` (5)."""

    support_js_module_import_aggregation = True
