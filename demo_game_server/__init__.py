"""A demo game server: the reference client of the studio's public API (issue 16).

It is what an operator's betting platform would be, cut down to what shows the calls: a few demo players with wallets
at the studio, a player page, and a relay from that page to the studio. It talks to the studio only over HTTP and
WebSocket with its own API key, exactly as an outside game server does, and imports nothing of the studio (an
import-linter contract checks it). `studio run` starts it in demo mode on a second port; docs/integration.md walks
through its calls in order.
"""
