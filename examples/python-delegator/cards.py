"""Agent cards: fetched, cached (RFC 9111), revalidated, and upgraded to the extended card.

Each agent holds a :class:`CardView`: one version of its card as the delegator uses it (the
extended card once read), its usable interfaces in card order, the SDK clients for them, and the
service parameters every request to it carries (``A2A-Extensions`` for the extensions the card
marks required, ``Authorization`` when the card requires its security scheme for every call). A
delegation keeps the view it started with; new work takes the agent's current one.

* **Caching** (spec §8.6): a card is reused while fresh (``Cache-Control: max-age`` less ``Age``,
  else ``Expires``; without either, five minutes; ``no-cache``/``no-store``: revalidated before
  every use). Once stale it is revalidated with ``If-None-Match`` / ``If-Modified-Since`` before
  the agent takes new work: a 304 refreshes it, a changed card replaces the view.
* **Extended card** (§3.1.11): read with ``GetExtendedAgentCard`` only when the card declares
  ``capabilities.extendedAgentCard``, declares a security scheme and the harness gave a
  credential for that agent (``init.agent_credentials``), sent as ``Authorization``; its skills
  and interfaces then replace the public card's.
* **Required extensions** (§4.6): an agent whose card requires an extension the delegator does
  not support (``init.extensions``) is not used; the supported ones go in ``A2A-Extensions``.
* **Signed cards** (§8.4.3, ``init.card_signatures``): a card with signatures is used only when
  one verifies with a trusted, unexpired key; an unsigned one not when signatures are required.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from typing import Any, Callable

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.client.client import ClientCallContext
from a2a.types import AgentCard, GetExtendedAgentCardRequest

from rest import EscapedRestTransport

BINDINGS = {'JSONRPC': 'jsonrpc', 'HTTP+JSON': 'rest', 'GRPC': 'grpc'}
DEFAULT_FRESH_S = 300.0


def freshness_s(headers: httpx.Headers) -> float:
    """How long a card answer stays fresh (0: revalidate before every use)."""
    directives: dict[str, str] = {}
    for part in headers.get('cache-control', '').split(','):
        key, _, value = part.strip().partition('=')
        if key:
            directives[key.lower()] = value.strip().strip('"')
    if 'no-store' in directives or 'no-cache' in directives:
        return 0.0
    if 'max-age' in directives:
        try:
            max_age = float(directives['max-age'])
            age = float(headers.get('age', '0') or 0)
        except ValueError:
            return 0.0
        return max(0.0, max_age - age)
    if 'expires' in headers:
        try:
            expires = email.utils.parsedate_to_datetime(headers['expires']).timestamp()
            date = headers.get('date')
            now = email.utils.parsedate_to_datetime(date).timestamp() if date else time.time()
        except (TypeError, ValueError):
            return 0.0  # an invalid Expires means already expired (RFC 9111 §5.3)
        return max(0.0, expires - now)
    return DEFAULT_FRESH_S


def required_extensions(card: AgentCard) -> list[str]:
    """The extension URIs a card marks ``required``, in card order."""
    return [e.uri for e in card.capabilities.extensions if e.required and e.uri]


def requires_auth_everywhere(card: AgentCard) -> bool:
    """Whether the card's ``securityRequirements`` name one of its schemes (they apply to every
    call, §7.3)."""
    return any(
        name in card.security_schemes for req in card.security_requirements for name in req.schemes
    )


# With init.tls_roots: only https:// interfaces are used (A2A §7.1, no plaintext fallback), and
# gRPC channels are TLS channels that trust exactly these roots (PEM bytes).
TLS_ONLY = False
TLS_ROOTS_PEM: bytes | None = None

# init.card_signatures, checked (signature_policy): the trusted JWKs by kid and whether a
# signature is required; None: no policy, cards are used whatever their signatures.
SIGNATURES: dict[str, Any] | None = None

# JWS algorithms a card signature may use (never `none`, never an HMAC: the keys are public).
SIGNING_ALGORITHMS = ['EdDSA', 'ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512',
                      'PS256', 'PS384', 'PS512']


def signature_policy(value: Any) -> dict[str, Any] | None:
    """``init.card_signatures`` checked: ``{'keys': {kid: JWK}, 'required': bool}``, or None."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError('card_signatures: must be an object')
    jwks = value.get('trusted_keys')
    keys = jwks.get('keys') if isinstance(jwks, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, dict) for k in keys):
        raise ValueError('card_signatures.trusted_keys: must be a JWKS ({"keys": [JWK, ...]})')
    required = value.get('required', False)
    if not isinstance(required, bool):
        raise ValueError('card_signatures.required: must be true or false')
    return {'keys': {k['kid']: k for k in keys if isinstance(k.get('kid'), str)},
            'required': required}


def signature_problem(card: AgentCard) -> str | None:
    """Why ``card`` must not be used under ``init.card_signatures`` (A2A §8.4.3), or None.

    One signature must verify (the SDK's verifier: the card without ``signatures`` and without
    default-valued members, JCS-canonicalised) with a key of the trusted set named by its
    ``kid`` that has not expired (a JWK ``exp`` in the past). A key the card's ``jku`` points at
    is not trusted by that alone, so ``jku`` is not followed.
    """
    if SIGNATURES is None:
        return None
    if not card.signatures:
        return 'the card is unsigned and signatures are required' if SIGNATURES['required'] \
            else None
    # PyJWT (a2a-sdk[signing]) only when a policy is given.
    from a2a.utils.signing import SignatureVerificationError, create_signature_verifier
    from jwt import PyJWK
    from jwt.exceptions import InvalidKeyError, PyJWTError

    def key(kid: str | None, _jku: str | None) -> Any:
        jwk = SIGNATURES['keys'].get(kid) if kid else None
        if jwk is None:
            raise InvalidKeyError(f'kid {kid!r} is not a trusted key')
        exp = jwk.get('exp')
        if isinstance(exp, (int, float)) and exp <= time.time():
            raise InvalidKeyError(f'key {kid!r} has expired')
        return PyJWK({k: v for k, v in jwk.items() if k != 'exp'}).key

    try:
        create_signature_verifier(key, SIGNING_ALGORITHMS)(card)
    except (SignatureVerificationError, PyJWTError, ValueError) as e:
        return f'no signature verifies with a trusted, unexpired key ({e})'
    return None


class CardView:
    """One version of an agent's card as used for requests (see the module documentation)."""

    def __init__(self, card: AgentCard, params: dict[str, str], missing: list[str],
                 max_event_bytes: int) -> None:
        self.card = card
        ifaces = [i for i in card.supported_interfaces if i.protocol_binding in BINDINGS]
        if TLS_ONLY:
            ifaces = [i for i in ifaces if i.url.startswith('https://')]
        v1 = [i for i in ifaces if (i.protocol_version or '1.0').startswith('1.')]
        self.interfaces = v1 or [i for i in ifaces if i.protocol_version.startswith('0.3')]
        self.preferred = 0
        self.params = params  # service parameters every request carries
        self.missing_extensions = missing  # required by the card, not supported: not used
        self.max_event_bytes = max_event_bytes
        self._clients: dict[tuple[int, bool], Any] = {}

    @property
    def streaming(self) -> bool:
        return bool(self.card.capabilities.streaming)

    def output_modes(self, skill: Any) -> list[str]:
        return list(skill.output_modes) or list(self.card.default_output_modes)

    def client(self, idx: int, streaming: bool, http: httpx.AsyncClient) -> Any:
        """The SDK client for interface ``idx`` (made once)."""
        key = (idx, streaming)
        if key not in self._clients:
            iface = self.interfaces[idx]
            card = AgentCard()
            card.CopyFrom(self.card)
            del card.supported_interfaces[:]
            card.supported_interfaces.add().CopyFrom(iface)
            extra: dict[str, Any] = {}
            if iface.protocol_binding == 'GRPC':
                import grpc  # a2a-sdk[grpc]

                limit = int(self.max_event_bytes)

                def channel(target: str) -> Any:
                    # One message may be as large as one SSE event: max_event_bytes.
                    options = [
                        ('grpc.max_receive_message_length', limit),
                        ('grpc.http2.bdp_probe', 0),
                    ]
                    if TLS_ROOTS_PEM is not None:
                        # Over TLS (ALPN h2), trusting init.tls_roots only. The SDK hands the
                        # interface URL over as it is (`https://host:port`): gRPC wants host:port.
                        host = target.split('://', 1)[-1].split('/', 1)[0]
                        creds = grpc.ssl_channel_credentials(root_certificates=TLS_ROOTS_PEM)
                        return grpc.aio.secure_channel(host, creds, options=options)
                    return grpc.aio.insecure_channel(target, options=options)

                extra['grpc_channel_factory'] = channel
            cfg = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_protocol_bindings=[iface.protocol_binding],
                **extra,
            )
            factory = ClientFactory(cfg)
            if iface.protocol_binding == 'HTTP+JSON' and (
                    iface.protocol_version or '1.0').startswith('1.'):
                # The SDK's HTTP+JSON transport does not percent-encode ids in paths (rest.py).
                factory.register('HTTP+JSON', lambda c, url, _cfg: EscapedRestTransport(
                    http, c, url, is_shared_httpx=True))
            self._clients[key] = factory.create(card)
        return self._clients[key]


class Agent:
    """An agent of ``init.agents``: its card URL and current :class:`CardView`."""

    def __init__(self, card_url: str, extensions: list[str], credential: str | None,
                 max_event_bytes: int, timeout_s: float, log: Callable[[str], None]) -> None:
        self.card_url = card_url
        self.supported_extensions = extensions
        self.credential = credential  # init.agent_credentials[card_url]: a secret, never logged
        self.max_event_bytes = max_event_bytes
        self.timeout_s = timeout_s
        self.log = log
        self.view: CardView | None = None
        self.error: str | None = None
        self.fresh_until = 0.0  # time.monotonic()
        self.etag: str | None = None
        self.last_modified: str | None = None
        self._lock = asyncio.Lock()

    async def ensure(self, http: httpx.AsyncClient) -> None:
        """Fetch the card if there is none, revalidate it if it is stale."""
        async with self._lock:
            if self.view is not None and time.monotonic() < self.fresh_until:
                return
            await self._fetch(http)

    async def _fetch(self, http: httpx.AsyncClient) -> None:
        headers = {}
        if self.view is not None:
            if self.etag:
                headers['If-None-Match'] = self.etag
            if self.last_modified:
                headers['If-Modified-Since'] = self.last_modified
        try:
            resp = await http.get(self.card_url, headers=headers)
            if resp.status_code == 304 and self.view is not None:
                self.fresh_until = time.monotonic() + freshness_s(resp.headers)
                return
            resp.raise_for_status()
            card = parse_agent_card(resp.json())
        except Exception as e:  # noqa: BLE001 - reported in init_ok, retried when routing
            if self.view is None:
                self.error = f'cannot read the card: {e}'
            else:
                self.log(f'{self.card_url}: revalidating the card failed ({e}); keeping it')
            return
        problem = signature_problem(card)
        if problem:
            # Never used: nothing is sent to its interfaces (its card may be fetched again).
            self.view = None
            self.error = f'card signature: {problem}'
            self.log(f'{self.card_url}: not used: {problem}')
            return
        self.fresh_until = time.monotonic() + freshness_s(resp.headers)
        self.etag = resp.headers.get('etag')
        self.last_modified = resp.headers.get('last-modified')
        self.view = await self._view_of(card, http)
        self.error = None if self.view.interfaces else \
            'no interface with a binding and version spoken'

    def _make_view(self, card: AgentCard, public: AgentCard) -> CardView:
        required = required_extensions(public) + [
            u for u in required_extensions(card) if u not in required_extensions(public)]
        missing = [u for u in required if u not in self.supported_extensions]
        params: dict[str, str] = {}
        active = [u for u in required if u in self.supported_extensions]
        if active:
            params['A2A-Extensions'] = ','.join(active)  # one header line (§9.2, §10.2, §11.2)
        if self.credential and requires_auth_everywhere(public):
            params['Authorization'] = self.credential
        return CardView(card, params, missing, self.max_event_bytes)

    async def _view_of(self, card: AgentCard, http: httpx.AsyncClient) -> CardView:
        view = self._make_view(card, card)
        if not (card.capabilities.extended_agent_card and card.security_schemes
                and self.credential and view.interfaces and not view.missing_extensions):
            return view
        try:
            client = view.client(view.preferred, False, http)
            ctx = ClientCallContext(
                service_parameters={**view.params, 'Authorization': self.credential},
                timeout=self.timeout_s)
            ext = await client.get_extended_agent_card(GetExtendedAgentCardRequest(), context=ctx)
        except Exception as e:  # noqa: BLE001 - the public card still serves
            self.log(f'{self.card_url}: GetExtendedAgentCard failed ({type(e).__name__}: {e}); '
                     'using the public card')
            return view
        extended = self._make_view(ext, card)
        return extended if extended.interfaces else view

    def info(self) -> dict[str, Any]:
        """The ``init_ok.agents`` entry."""
        v = self.view
        if v is None or not v.interfaces:
            return {'card_url': self.card_url, 'ok': False, 'error': self.error}
        i = v.interfaces[v.preferred]
        return {
            'card_url': self.card_url, 'ok': True, 'name': v.card.name,
            'protocol_version': i.protocol_version or '1.0',
            'binding': BINDINGS[i.protocol_binding],
        }
