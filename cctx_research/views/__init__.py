"""What the views share: the report, the widgets and the web app all import these.

:mod:`.markup`
    HTML pieces: escaping, tables, figures embedded as PNG, the synthetic banner.
:mod:`.explorers`
    Block-explorer links for addresses and transaction hashes.
:mod:`.selection`
    Which rows a view shows: the chains picked, the transfers touching them.
:mod:`.notices`
    The toolkit's warnings as status lines in notebooks.

Nothing is imported here, so reaching :mod:`.selection` loads no plotting library.
"""
