#!/usr/bin/env python3
"""Strict ProtoJSON oracle over the official A2A Python SDK's protobuf types.

The types are the ones generated from the A2A 1.0 proto (package ``lf.a2a.v1``)
and shipped in ``a2a-sdk`` as ``a2a.types.a2a_pb2`` (re-exported by ``a2a.types``).

Batch protocol: JSON on stdin, JSON on stdout (one document, newline-terminated).

``check``
    stdin:  ``[{"type": "Task", "json": <value>}, ...]``
    stdout: ``[{"type": "Task", "ok": true, "canonical": <value>,
               "requiredViolations": [{"field", "message"}...]}
              | {"type": "Task", "ok": false, "error": "..."}, ...]``
    Each value is parsed with ``json_format.ParseDict(value, Type())`` WITHOUT
    ``ignore_unknown_fields`` (unknown keys, bad enum names, two members of a
    oneof, wrong JSON kinds and duplicate object keys all fail).  Note that
    protobuf's parser DOES accept snake_case keys, integer enums, ``null`` as
    "unset", unpadded/URL-safe base64 and non-Z timestamp offsets (normalised
    to Z in ``canonical``): compare ``canonical`` with the input to catch those.  ``canonical`` is ``MessageToDict`` of
    the parsed message (camelCase JSON names, enums as names, defaults
    omitted).  ``requiredViolations`` lists fields marked
    ``(google.api.field_behavior) = REQUIRED`` that are unset/empty, computed
    with the SDK's own validator (the one its server uses to answer -32602);
    it does not affect ``ok``.

``emit``
    stdout: ``[{"type": "Part", "label": "Part/text", "json": <value>}, ...]``
    Fully populated instances built with the SDK classes and serialised with
    ``MessageToDict`` (default options).

``types``
    stdout: ``{"sdkVersion", "module", "protoPackage", "types": {name: fullName},
               "missing": {name: sdkNameOrNull}}`` for the type names the Rust
    harness expects.

``pb-encode``
    stdin:  ``[{"type": "Task", "json": <value>}, ...]``
    stdout: ``[{"type", "ok": true, "b64": "<base64 of SerializeToString>"}
              | {"type", "ok": false, "error"}, ...]``
    ``ParseDict`` (strict, as ``check``) then deterministic protobuf bytes.

``pb-decode``
    stdin:  ``[{"type": "Task", "b64": "<base64 protobuf bytes>"}, ...]``
    stdout: ``[{"type", "ok": true, "json": <MessageToDict>}
              | {"type", "ok": false, "error"}, ...]``
    ``FromString`` of the bytes (no frame header); enum numbers the enum does
    not name are written as integers, as ``MessageToDict`` does.

``pb-descriptor``
    stdout: ``{"package", "dependencies", "messages": {fullName: [field...]},
               "oneofs": {fullName: [name...]}, "enums": {fullName: {name: n}},
               "services": {fullName: [method...]}}`` from
    ``a2a_pb2.DESCRIPTOR``: each field ``{name, number, label, type, typeName,
    jsonName, oneof, proto3Optional, behavior}`` (``behavior``: the
    ``google.api.field_behavior`` numbers; ``oneof``: the oneof's name, also
    for the synthetic ``_x`` oneof of an ``optional`` field), each method
    ``{name, input, output, clientStreaming, serverStreaming, http,
    signatures}`` (``http``: the ``google.api.http`` rule as ProtoJSON).

Numbers inside ``google.protobuf.Struct``/``Value`` are doubles in protobuf;
integral doubles (|x| < 2**53) are printed as JSON integers (``1`` not
``1.0``) so that JSON comparisons elsewhere are not tripped by ``1.0 != 1``.

Exit status: 0 on success (even if some items fail to parse: see ``ok``);
2 with a message on stderr on malformed stdin or usage errors.
"""

from __future__ import annotations

import base64
import json
import sys

from typing import Any


EXPECTED_TYPES = [
    'Message',
    'Part',
    'Task',
    'TaskStatus',
    'Artifact',
    'TaskStatusUpdateEvent',
    'TaskArtifactUpdateEvent',
    'SendMessageRequest',
    'SendMessageConfiguration',
    'SendMessageResponse',
    'StreamResponse',
    'GetTaskRequest',
    'ListTasksRequest',
    'ListTasksResponse',
    'CancelTaskRequest',
    'SubscribeToTaskRequest',
    'TaskPushNotificationConfig',
    'GetTaskPushNotificationConfigRequest',
    'ListTaskPushNotificationConfigsRequest',
    'ListTaskPushNotificationConfigsResponse',
    'DeleteTaskPushNotificationConfigRequest',
    'GetExtendedAgentCardRequest',
    'AgentCard',
    'AuthenticationInfo',
    'AgentCapabilities',
    'AgentSkill',
    'AgentInterface',
    'SecurityScheme',
]

# Names used by older drafts/SDKs -> 1.0 proto name, for the "missing" report.
_KNOWN_RENAMES = {
    'ListTaskPushNotificationConfigRequest': 'ListTaskPushNotificationConfigsRequest',
    'ListTaskPushNotificationConfigResponse': 'ListTaskPushNotificationConfigsResponse',
    'PushNotificationAuthenticationInfo': 'AuthenticationInfo',
    'TaskResubscriptionRequest': 'SubscribeToTaskRequest',
    'GetAuthenticatedExtendedCardRequest': 'GetExtendedAgentCardRequest',
}


def die(msg: str, code: int = 2) -> None:
    sys.stderr.write(f'sdk_oracle: {msg}\n')
    sys.exit(code)


try:
    from google.protobuf import descriptor_pb2, json_format, struct_pb2, timestamp_pb2
    from google.protobuf.message import Message as ProtoMessage

    from a2a.types import a2a_pb2 as pb
except ImportError as exc:  # pragma: no cover - environment problem
    die(
        f'cannot import a2a-sdk protobuf types ({exc}); '
        'run scripts/setup-python.sh and use .venv/bin/python'
    )

try:  # the validator the SDK server uses for -32602 on REQUIRED fields
    from a2a.utils.proto_utils import (
        _validate_proto_required_fields_internal as _sdk_required_check,
    )
except ImportError:  # pragma: no cover
    _sdk_required_check = None


def _sdk_version() -> str:
    try:
        from importlib.metadata import version

        return version('a2a-sdk')
    except Exception:  # noqa: BLE001
        return 'unknown'


def _message_classes() -> dict[str, type[ProtoMessage]]:
    classes = {}
    for name in pb.DESCRIPTOR.message_types_by_name:
        cls = getattr(pb, name, None)
        if cls is not None:
            classes[name] = cls
    return classes


CLASSES = _message_classes()


def _ints_for_integral_floats(value: Any) -> Any:
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        return value
    if isinstance(value, dict):
        return {k: _ints_for_integral_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints_for_integral_floats(v) for v in value]
    return value


def to_json(msg: ProtoMessage) -> Any:
    return _ints_for_integral_floats(json_format.MessageToDict(msg))


# --------------------------------------------------------------------- check


class _DupDict(dict):
    """A JSON object in which some key occurred more than once."""

    dups: list[str]


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    dups: list[str] = []
    for k, v in pairs:
        if k in seen:
            dups.append(k)
        seen[k] = v
    if dups:
        d = _DupDict(seen)
        d.dups = dups
        return d
    return seen


def _find_dup_keys(value: Any, path: str = '$') -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        if isinstance(value, _DupDict):
            found.extend(f'{path}.{k}' for k in value.dups)
        for k, v in value.items():
            found.extend(_find_dup_keys(v, f'{path}.{k}'))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found.extend(_find_dup_keys(v, f'{path}[{i}]'))
    return found


def check_one(item: dict[str, Any]) -> dict[str, Any]:
    type_name = item['type']
    out: dict[str, Any] = {'type': type_name}
    cls = CLASSES.get(type_name)
    if cls is None:
        hint = _KNOWN_RENAMES.get(type_name)
        out['ok'] = False
        out['error'] = f'unknown type {type_name!r} in {pb.DESCRIPTOR.package}' + (
            f' (the SDK calls it {hint!r})' if hint else ''
        )
        return out
    value = item['json']
    if not isinstance(value, dict):
        out['ok'] = False
        out['error'] = (
            f'expected a JSON object for {type_name}, got {type(value).__name__}'
        )
        return out
    dups = _find_dup_keys(value)
    if dups:
        out['ok'] = False
        out['error'] = f'duplicate JSON object key(s): {", ".join(dups)}'
        return out
    try:
        msg = json_format.ParseDict(value, cls())  # strict: no ignore_unknown_fields
    except Exception as exc:  # noqa: BLE001 - ParseError, TypeError, ValueError...
        out['ok'] = False
        out['error'] = f'{type(exc).__name__}: {exc}'
        return out
    out['ok'] = True
    out['canonical'] = to_json(msg)
    if _sdk_required_check is not None:
        out['requiredViolations'] = [
            {'field': v['field'], 'message': v['message']}
            for v in _sdk_required_check(msg)
        ]
    return out


def cmd_check(data: Any) -> Any:
    if not isinstance(data, list):
        die('check: stdin must be a JSON array of {"type", "json"} objects')
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            die(f'check: item {i} is not an object')
        if not isinstance(item.get('type'), str):
            die(f'check: item {i} has no string "type"')
        if 'json' not in item:
            die(f'check: item {i} has no "json"')
    return [check_one(item) for item in data]


# ---------------------------------------------------------------------- emit


def ts(text: str) -> timestamp_pb2.Timestamp:
    t = timestamp_pb2.Timestamp()
    t.FromJsonString(text)
    return t


def struct(d: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(d)
    return s


def value(v: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    json_format.ParseDict(v, out)
    return out


def build_instances() -> list[tuple[str, ProtoMessage]]:  # noqa: PLR0915
    P = pb  # noqa: N806
    out: list[tuple[str, ProtoMessage]] = []

    # Parts: one per oneof member, each with every sibling field.
    part_text = P.Part(
        text='Summarize the attached file',
        metadata=struct({'lang': 'en'}),
        filename='prompt.txt',
        media_type='text/plain',
    )
    part_raw = P.Part(
        raw=b'\x89PNG\r\n\x1a\n\x00\xff\xfe',
        metadata=struct({'source': 'camera', 'seq': 1}),
        filename='in.png',
        media_type='image/png',
    )
    part_url = P.Part(
        url='https://files.example/out.pdf',
        metadata=struct({'sizeBytes': 1024}),
        filename='out.pdf',
        media_type='application/pdf',
    )
    part_data = P.Part(
        data=value({'budgetUsd': 3.5, 'items': [1, 2], 'ok': True, 'none': None}),
        metadata=struct({'schema': 'quote.v1'}),
        filename='quote.json',
        media_type='application/json',
    )
    for label, part in [
        ('text', part_text),
        ('raw', part_raw),
        ('url', part_url),
        ('data', part_data),
    ]:
        out.append((f'Part/{label}', part))

    user_msg = P.Message(
        message_id='m-1',
        context_id='c-1',
        task_id='t-1',
        role=P.Role.ROLE_USER,
        parts=[part_text, part_raw, part_url, part_data],
        metadata=struct({'x-deleg': {'depth': 1, 'chain': ['http://127.0.0.1:4100/']}}),
        extensions=['https://ext.example/a2a/deleg/v1'],
        reference_task_ids=['t-0'],
    )
    agent_msg = P.Message(
        message_id='m-a1',
        context_id='c-1',
        task_id='t-1',
        role=P.Role.ROLE_AGENT,
        parts=[P.Part(text='From which airport?', media_type='text/plain')],
        metadata=struct({'turn': 2}),
        extensions=['https://ext.example/a2a/deleg/v1'],
        reference_task_ids=['t-0'],
    )
    out.append(('Message/user', user_msg))
    out.append(('Message/agent', agent_msg))

    status = P.TaskStatus(
        state=P.TaskState.TASK_STATE_INPUT_REQUIRED,
        message=agent_msg,
        timestamp=ts('2026-03-20T10:00:00.123Z'),
    )
    out.append(('TaskStatus', status))

    artifact = P.Artifact(
        artifact_id='a-1',
        name='report',
        description='Quarterly report',
        parts=[part_text, part_raw, part_url, part_data],
        metadata=struct({'version': 3}),
        extensions=['https://ext.example/a2a/deleg/v1'],
    )
    out.append(('Artifact', artifact))

    task = P.Task(
        id='t-1',
        context_id='c-1',
        status=status,
        artifacts=[artifact],
        history=[user_msg, agent_msg],
        metadata=struct({'priority': 'high'}),
    )
    out.append(('Task', task))

    status_update = P.TaskStatusUpdateEvent(
        task_id='t-1',
        context_id='c-1',
        status=P.TaskStatus(
            state=P.TaskState.TASK_STATE_WORKING,
            message=agent_msg,
            timestamp=ts('2026-03-20T10:00:01.000Z'),
        ),
        metadata=struct({'progress': 0.5}),
    )
    out.append(('TaskStatusUpdateEvent', status_update))

    artifact_update = P.TaskArtifactUpdateEvent(
        task_id='t-1',
        context_id='c-1',
        artifact=artifact,
        append=True,
        last_chunk=True,
        metadata=struct({'chunk': 2}),
    )
    out.append(('TaskArtifactUpdateEvent', artifact_update))

    auth = P.AuthenticationInfo(scheme='Bearer', credentials='hook-secret')
    out.append(('AuthenticationInfo', auth))

    push_cfg = P.TaskPushNotificationConfig(
        tenant='tenant-a',
        id='cfg-1',
        task_id='t-1',
        url='http://127.0.0.1:7000/hook',
        token='tok-t1',
        authentication=auth,
    )
    out.append(('TaskPushNotificationConfig', push_cfg))

    send_cfg = P.SendMessageConfiguration(
        accepted_output_modes=['text/plain', 'application/json'],
        task_push_notification_config=P.TaskPushNotificationConfig(
            tenant='tenant-a',
            id='cfg-2',
            url='http://127.0.0.1:7000/hook',
            token='tok-new',
            authentication=auth,
        ),
        history_length=5,
        return_immediately=True,
    )
    out.append(('SendMessageConfiguration', send_cfg))

    out.append((
        'SendMessageRequest',
        P.SendMessageRequest(
            tenant='tenant-a',
            message=user_msg,
            configuration=send_cfg,
            metadata=struct({
                'x-deleg': {
                    'deadline': '2026-03-20T10:07:00Z',
                    'budget_usd': 2.0,
                    'depth': 1,
                    'chain': ['http://127.0.0.1:4100/'],
                }
            }),
        ),
    ))
    out.append(('SendMessageResponse/task', P.SendMessageResponse(task=task)))
    out.append(('SendMessageResponse/message', P.SendMessageResponse(message=agent_msg)))

    out.append(('StreamResponse/task', P.StreamResponse(task=task)))
    out.append(('StreamResponse/message', P.StreamResponse(message=agent_msg)))
    out.append(('StreamResponse/statusUpdate', P.StreamResponse(status_update=status_update)))
    out.append(('StreamResponse/artifactUpdate', P.StreamResponse(artifact_update=artifact_update)))

    out.append(('GetTaskRequest', P.GetTaskRequest(tenant='tenant-a', id='t-1', history_length=2)))
    out.append((
        'ListTasksRequest',
        P.ListTasksRequest(
            tenant='tenant-a',
            context_id='c-1',
            status=P.TaskState.TASK_STATE_WORKING,
            page_size=10,
            page_token='page-2',
            history_length=0,
            status_timestamp_after=ts('2026-03-20T09:00:00.000Z'),
            include_artifacts=True,
        ),
    ))
    out.append((
        'ListTasksResponse',
        P.ListTasksResponse(
            tasks=[task],
            next_page_token='page-3',
            page_size=10,
            total_size=21,
        ),
    ))
    out.append((
        'CancelTaskRequest',
        P.CancelTaskRequest(tenant='tenant-a', id='t-1', metadata=struct({'reason': 'user'})),
    ))
    out.append(('SubscribeToTaskRequest', P.SubscribeToTaskRequest(tenant='tenant-a', id='t-1')))
    out.append((
        'GetTaskPushNotificationConfigRequest',
        P.GetTaskPushNotificationConfigRequest(tenant='tenant-a', task_id='t-1', id='cfg-1'),
    ))
    out.append((
        'ListTaskPushNotificationConfigsRequest',
        P.ListTaskPushNotificationConfigsRequest(
            tenant='tenant-a', task_id='t-1', page_size=20, page_token='p-1'
        ),
    ))
    out.append((
        'ListTaskPushNotificationConfigsResponse',
        P.ListTaskPushNotificationConfigsResponse(configs=[push_cfg], next_page_token='p-2'),
    ))
    out.append((
        'DeleteTaskPushNotificationConfigRequest',
        P.DeleteTaskPushNotificationConfigRequest(tenant='tenant-a', task_id='t-1', id='cfg-1'),
    ))
    out.append(('GetExtendedAgentCardRequest', P.GetExtendedAgentCardRequest(tenant='tenant-a')))

    # Security schemes: every oneof member; oauth2 once per OAuthFlows member.
    scopes = {'read': 'Read access', 'write': 'Write access'}
    schemes: list[tuple[str, ProtoMessage]] = [
        ('apiKey', P.SecurityScheme(api_key_security_scheme=P.APIKeySecurityScheme(
            description='API key in a header', location='header', name='X-API-Key'))),
        ('httpAuth', P.SecurityScheme(http_auth_security_scheme=P.HTTPAuthSecurityScheme(
            description='Bearer JWT', scheme='Bearer', bearer_format='JWT'))),
        ('oauth2/authorizationCode', P.SecurityScheme(oauth2_security_scheme=P.OAuth2SecurityScheme(
            description='OAuth2 authorization code + PKCE',
            flows=P.OAuthFlows(authorization_code=P.AuthorizationCodeOAuthFlow(
                authorization_url='https://auth.example/authorize',
                token_url='https://auth.example/token',
                refresh_url='https://auth.example/refresh',
                scopes=scopes,
                pkce_required=True)),
            oauth2_metadata_url='https://auth.example/.well-known/oauth-authorization-server'))),
        ('oauth2/clientCredentials', P.SecurityScheme(oauth2_security_scheme=P.OAuth2SecurityScheme(
            description='OAuth2 client credentials',
            flows=P.OAuthFlows(client_credentials=P.ClientCredentialsOAuthFlow(
                token_url='https://auth.example/token',
                refresh_url='https://auth.example/refresh',
                scopes=scopes)),
            oauth2_metadata_url='https://auth.example/.well-known/oauth-authorization-server'))),
        ('oauth2/deviceCode', P.SecurityScheme(oauth2_security_scheme=P.OAuth2SecurityScheme(
            description='OAuth2 device code',
            flows=P.OAuthFlows(device_code=P.DeviceCodeOAuthFlow(
                device_authorization_url='https://auth.example/device',
                token_url='https://auth.example/token',
                refresh_url='https://auth.example/refresh',
                scopes=scopes)),
            oauth2_metadata_url='https://auth.example/.well-known/oauth-authorization-server'))),
        ('oauth2/implicit(deprecated)', P.SecurityScheme(oauth2_security_scheme=P.OAuth2SecurityScheme(
            description='OAuth2 implicit (deprecated)',
            flows=P.OAuthFlows(implicit=P.ImplicitOAuthFlow(
                authorization_url='https://auth.example/authorize',
                refresh_url='https://auth.example/refresh',
                scopes=scopes))))),
        ('oauth2/password(deprecated)', P.SecurityScheme(oauth2_security_scheme=P.OAuth2SecurityScheme(
            description='OAuth2 password (deprecated)',
            flows=P.OAuthFlows(password=P.PasswordOAuthFlow(
                token_url='https://auth.example/token',
                refresh_url='https://auth.example/refresh',
                scopes=scopes))))),
        ('openIdConnect', P.SecurityScheme(open_id_connect_security_scheme=P.OpenIdConnectSecurityScheme(
            description='OIDC', open_id_connect_url='https://auth.example/.well-known/openid-configuration'))),
        ('mtls', P.SecurityScheme(mtls_security_scheme=P.MutualTlsSecurityScheme(
            description='Client certificate'))),
    ]
    for label, scheme in schemes:
        out.append((f'SecurityScheme/{label}', scheme))

    req_bearer = P.SecurityRequirement(schemes={'bearer': P.StringList(list=[])})
    req_oauth = P.SecurityRequirement(
        schemes={'oauth': P.StringList(list=['read', 'write']), 'apiKey': P.StringList(list=[])}
    )

    interfaces = [
        P.AgentInterface(url='http://127.0.0.1:9101/a2a', protocol_binding='JSONRPC',
                         tenant='tenant-a', protocol_version='1.0'),
        P.AgentInterface(url='http://127.0.0.1:9101/rest', protocol_binding='HTTP+JSON',
                         tenant='tenant-a', protocol_version='1.0'),
        P.AgentInterface(url='127.0.0.1:9102', protocol_binding='GRPC',
                         tenant='tenant-a', protocol_version='1.0'),
    ]
    for iface in interfaces:
        out.append((f'AgentInterface/{iface.protocol_binding}', iface))

    capabilities = P.AgentCapabilities(
        streaming=True,
        push_notifications=True,
        extensions=[P.AgentExtension(
            uri='https://ext.example/a2a/deleg/v1',
            description='Delegation budget/deadline propagation',
            required=False,
            params=struct({'maxDepth': 4}),
        ), P.AgentExtension(
            uri='https://ext.example/a2a/strict/v1',
            description='A required extension',
            required=True,
            params=struct({}),
        )],
        extended_agent_card=True,
    )
    out.append(('AgentCapabilities', capabilities))
    out.append(('AgentCapabilities/allFalse', P.AgentCapabilities(
        streaming=False, push_notifications=False, extended_agent_card=False)))

    skill = P.AgentSkill(
        id='book-flight',
        name='Book flight',
        description='Books a flight; may ask for input',
        tags=['travel', 'booking'],
        examples=['Book SFO to JFK on Friday'],
        input_modes=['text/plain', 'application/json'],
        output_modes=['text/plain', 'application/pdf'],
        security_requirements=[req_oauth],
    )
    out.append(('AgentSkill', skill))

    card = P.AgentCard(
        name='mock-flight-agent',
        description='Deterministic mock A2A agent for conformance tests',
        supported_interfaces=interfaces,
        provider=P.AgentProvider(url='https://example.invalid', organization='conformance-harness'),
        version='0.1.0',
        documentation_url='https://example.invalid/docs',
        capabilities=capabilities,
        security_schemes={
            'apiKey': schemes[0][1],
            'bearer': schemes[1][1],
            'oauth': schemes[2][1],
            'oauthClient': schemes[3][1],
            'oauthDevice': schemes[4][1],
            'oidc': schemes[7][1],
            'mtls': schemes[8][1],
        },
        security_requirements=[req_bearer, req_oauth],
        default_input_modes=['text/plain', 'application/json'],
        default_output_modes=['text/plain', 'application/json'],
        skills=[skill],
        signatures=[P.AgentCardSignature(
            protected='eyJhbGciOiJFUzI1NiJ9',
            signature='c2lnbmF0dXJl',
            header=struct({'kid': 'key-1'}),
        )],
        icon_url='https://example.invalid/icon.png',
    )
    out.append(('AgentCard', card))

    return out


def cmd_emit() -> Any:
    return [
        {'type': msg.DESCRIPTOR.name, 'label': label, 'json': to_json(msg)}
        for label, msg in build_instances()
    ]


def cmd_types() -> Any:
    types = {}
    missing = {}
    for name in EXPECTED_TYPES:
        cls = CLASSES.get(name)
        if cls is None:
            missing[name] = _KNOWN_RENAMES.get(name)
        else:
            types[name] = cls.DESCRIPTOR.full_name
    return {
        'sdkVersion': _sdk_version(),
        'module': pb.__name__,
        'protoPackage': pb.DESCRIPTOR.package,
        'types': types,
        'missing': missing,
        'allMessages': sorted(CLASSES),
    }


# ------------------------------------------------------------ protobuf bytes


def _items(data: Any, key: str) -> list[dict[str, Any]]:
    if not isinstance(data, list) or not all(
        isinstance(i, dict) and isinstance(i.get('type'), str) and key in i for i in data
    ):
        die(f'stdin must be a JSON array of {{"type": name, "{key}": ...}} objects')
    return data


def cmd_pb_encode(data: Any) -> Any:
    out = []
    for item in _items(data, 'json'):
        name = item['type']
        cls = CLASSES.get(name)
        if cls is None:
            out.append({'type': name, 'ok': False, 'error': f'unknown type {name}'})
            continue
        try:
            msg = json_format.ParseDict(item['json'], cls())
            raw = msg.SerializeToString(deterministic=True)
            out.append({'type': name, 'ok': True, 'b64': base64.b64encode(raw).decode()})
        except Exception as exc:  # noqa: BLE001 - reported per item
            out.append({'type': name, 'ok': False, 'error': f'{type(exc).__name__}: {exc}'})
    return out


def cmd_pb_decode(data: Any) -> Any:
    out = []
    for item in _items(data, 'b64'):
        name = item['type']
        cls = CLASSES.get(name)
        if cls is None:
            out.append({'type': name, 'ok': False, 'error': f'unknown type {name}'})
            continue
        try:
            msg = cls.FromString(base64.b64decode(item['b64'], validate=True))
            out.append({'type': name, 'ok': True, 'json': to_json(msg)})
        except Exception as exc:  # noqa: BLE001 - reported per item
            out.append({'type': name, 'ok': False, 'error': f'{type(exc).__name__}: {exc}'})
    return out


def cmd_pb_descriptor() -> Any:
    from google.api import annotations_pb2, client_pb2, field_behavior_pb2

    fd = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(fd)
    messages: dict[str, Any] = {}
    oneofs: dict[str, Any] = {}
    enums: dict[str, Any] = {}

    def walk(prefix: str, m: Any) -> None:
        full = f'{prefix}.{m.name}'
        fields = []
        for f in m.field:
            fields.append({
                'name': f.name,
                'number': f.number,
                'label': f.label,
                'type': f.type,
                'typeName': f.type_name,
                'jsonName': f.json_name,
                'oneof': m.oneof_decl[f.oneof_index].name if f.HasField('oneof_index') else None,
                'proto3Optional': f.proto3_optional,
                'behavior': list(f.options.Extensions[field_behavior_pb2.field_behavior]),
            })
        messages[full] = sorted(fields, key=lambda x: x['number'])
        oneofs[full] = [o.name for o in m.oneof_decl]
        for n in m.nested_type:
            walk(full, n)
        for e in m.enum_type:
            enums[f'{full}.{e.name}'] = {v.name: v.number for v in e.value}

    for m in fd.message_type:
        walk(f'.{fd.package}', m)
    for e in fd.enum_type:
        enums[f'.{fd.package}.{e.name}'] = {v.name: v.number for v in e.value}
    services = {}
    for s in fd.service:
        services[f'.{fd.package}.{s.name}'] = [
            {
                'name': m.name,
                'input': m.input_type,
                'output': m.output_type,
                'clientStreaming': m.client_streaming,
                'serverStreaming': m.server_streaming,
                'http': json_format.MessageToDict(m.options.Extensions[annotations_pb2.http]),
                'signatures': list(m.options.Extensions[client_pb2.method_signature]),
            }
            for m in s.method
        ]
    return {
        'package': fd.package,
        'dependencies': sorted(fd.dependency),
        'messages': messages,
        'oneofs': oneofs,
        'enums': enums,
        'services': services,
    }


COMMANDS = ('check', 'emit', 'types', 'pb-encode', 'pb-decode', 'pb-descriptor')


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in COMMANDS:
        die(
            'usage: sdk_oracle.py check|emit|types|pb-encode|pb-decode|pb-descriptor  '
            '(check, pb-encode and pb-decode read JSON on stdin)'
        )
    cmd = argv[1]
    if cmd in ('pb-encode', 'pb-decode'):
        try:
            data = json.loads(sys.stdin.buffer.read())
        except (ValueError, UnicodeDecodeError) as exc:
            die(f'{cmd}: stdin is not valid JSON: {exc}')
        result = cmd_pb_encode(data) if cmd == 'pb-encode' else cmd_pb_decode(data)
    elif cmd == 'pb-descriptor':
        result = cmd_pb_descriptor()
    elif cmd == 'check':
        raw = sys.stdin.buffer.read()
        try:
            data = json.loads(raw, object_pairs_hook=_pairs_hook)
        except (ValueError, UnicodeDecodeError) as exc:
            die(f'check: stdin is not valid JSON: {exc}')
        result = cmd_check(data)
    elif cmd == 'emit':
        result = cmd_emit()
    else:
        result = cmd_types()
    sys.stdout.write(json.dumps(result) + '\n')
    sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
