"""The operator dashboard: one self-contained HTML page (`index.html`), served by
`gateway.api.dashboard`. The page holds no data; it reads `/admin/*` with the admin key."""
