//! The agent card: interfaces, extended-card flag, security schemes and requirements.

use serde_json::{Map, Value};

use super::errors::*;
use super::helpers::*;
use crate::version::parse_version_number;

/// `(0.3 type, 1.0 wrapper key)` of each security scheme.
pub(super) const SCHEMES: &[(&str, &str)] = &[
    ("apiKey", "apiKeySecurityScheme"),
    ("http", "httpAuthSecurityScheme"),
    ("oauth2", "oauth2SecurityScheme"),
    ("openIdConnect", "openIdConnectSecurityScheme"),
    ("mutualTLS", "mtlsSecurityScheme"),
];

/// OAuth flows in the order one is kept when 0.3 lists several (1.0 `OAuthFlows` is a oneof).
pub(super) const OAUTH_FLOWS: &[&str] = &[
    "authorizationCode",
    "clientCredentials",
    "deviceCode",
    "password",
    "implicit",
];

/// `"0.3.0"` ⇒ `"0.3"`; anything not of the form `N.N[.…]` is returned unchanged.
pub(super) fn major_minor(version: &str) -> String {
    let mut it = version.split('.');
    match (it.next(), it.next()) {
        (Some(a), Some(b))
            if parse_version_number(a).is_some() && parse_version_number(b).is_some() =>
        {
            format!("{a}.{b}")
        }
        _ => version.to_owned(),
    }
}

pub(super) fn interface(url: &Value, binding: &Value, version: &Value) -> Value {
    let mut m = Map::new();
    m.insert("url".into(), url.clone());
    m.insert("protocolBinding".into(), binding.clone());
    m.insert("protocolVersion".into(), version.clone());
    Value::Object(m)
}

pub(super) fn card_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "url"
            | "preferredTransport"
            | "additionalInterfaces"
            | "protocolVersion"
            | "supportsAuthenticatedExtendedCard" => Field::Drop,
            "capabilities" => {
                let caps = obj(val, p)?;
                Field::Set(Value::Object(rebuild(caps, p, |ck, _, _| {
                    Ok(if ck == "stateTransitionHistory" {
                        Field::Drop
                    } else {
                        Field::Keep
                    })
                })?))
            }
            "securitySchemes" => Field::Set(schemes_map(val, p, scheme_to_v1)?),
            "security" => Field::Rename("securityRequirements", requirements_to_v1(val, p)?),
            "skills" => Field::Set(map_array(val, p, skill_to_v1)?),
            _ => Field::Keep,
        })
    })?;

    if !present(src, "supportedInterfaces") {
        let url_path = key_path(path, "url");
        let url = get(src, "url").ok_or_else(|| err(&url_path, AdaptErrorKind::Missing))?;
        str_at(url, &url_path)?;
        let default_binding = Value::String("JSONRPC".into());
        let binding = get(src, "preferredTransport").unwrap_or(&default_binding);
        let version = match get(src, "protocolVersion") {
            Some(ver) => Value::String(major_minor(str_at(
                ver,
                &key_path(path, "protocolVersion"),
            )?)),
            None => Value::String("0.3".into()),
        };
        let mut list = vec![interface(url, binding, &version)];
        let mut seen = vec![(url.clone(), binding.clone())];
        if let Some(extra) = get(src, "additionalInterfaces") {
            let extra_path = key_path(path, "additionalInterfaces");
            let arr = extra
                .as_array()
                .ok_or_else(|| wrong_type(&extra_path, "array", extra))?;
            for (i, item) in arr.iter().enumerate() {
                let ip = idx_path(&extra_path, i);
                let m = obj(item, &ip)?;
                let iurl = get(m, "url")
                    .ok_or_else(|| err(&key_path(&ip, "url"), AdaptErrorKind::Missing))?;
                let itransport = get(m, "transport")
                    .ok_or_else(|| err(&key_path(&ip, "transport"), AdaptErrorKind::Missing))?;
                let key = (iurl.clone(), itransport.clone());
                if !seen.contains(&key) {
                    list.push(interface(iurl, itransport, &version));
                    seen.push(key);
                }
            }
        }
        out.insert("supportedInterfaces".into(), Value::Array(list));
    }

    if let Some(flag) = get(src, "supportsAuthenticatedExtendedCard") {
        let flag_path = key_path(path, "supportsAuthenticatedExtendedCard");
        if !flag.is_boolean() {
            return Err(wrong_type(&flag_path, "boolean", flag));
        }
        let caps = out
            .entry("capabilities")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(caps) = caps {
            caps.insert("extendedAgentCard".into(), flag.clone());
        }
    }
    Ok(Value::Object(out))
}

pub(super) fn card_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut extended: Option<Value> = None;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "supportedInterfaces" => Field::Drop,
            "capabilities" => {
                let caps = obj(val, p)?;
                Field::Set(Value::Object(rebuild(caps, p, |ck, cval, _| {
                    Ok(if ck == "extendedAgentCard" {
                        extended = Some(cval.clone());
                        Field::Drop
                    } else {
                        Field::Keep
                    })
                })?))
            }
            "securitySchemes" => Field::Set(schemes_map(val, p, scheme_to_v03)?),
            "securityRequirements" => Field::Rename("security", requirements_to_v03(val, p)?),
            "skills" => Field::Set(map_array(val, p, skill_to_v03)?),
            _ => Field::Keep,
        })
    })?;

    let si_path = key_path(path, "supportedInterfaces");
    let interfaces =
        get(src, "supportedInterfaces").ok_or_else(|| err(&si_path, AdaptErrorKind::Missing))?;
    let arr = interfaces
        .as_array()
        .ok_or_else(|| wrong_type(&si_path, "array", interfaces))?;
    let mut additional = Vec::with_capacity(arr.len());
    for (i, item) in arr.iter().enumerate() {
        let ip = idx_path(&si_path, i);
        let m = obj(item, &ip)?;
        let url =
            get(m, "url").ok_or_else(|| err(&key_path(&ip, "url"), AdaptErrorKind::Missing))?;
        let binding = get(m, "protocolBinding")
            .ok_or_else(|| err(&key_path(&ip, "protocolBinding"), AdaptErrorKind::Missing))?;
        if i == 0 {
            out.insert("url".into(), url.clone());
            out.insert("preferredTransport".into(), binding.clone());
            if let Some(ver) = get(m, "protocolVersion") {
                out.insert("protocolVersion".into(), ver.clone());
            }
        }
        let mut entry = Map::new();
        entry.insert("url".into(), url.clone());
        entry.insert("transport".into(), binding.clone());
        additional.push(Value::Object(entry));
    }
    if additional.is_empty() {
        return Err(err(
            &si_path,
            AdaptErrorKind::Invalid("empty list; a 0.3 card needs a url".into()),
        ));
    }
    out.insert("additionalInterfaces".into(), Value::Array(additional));
    if let Some(flag) = extended {
        out.insert("supportsAuthenticatedExtendedCard".into(), flag);
    }
    Ok(Value::Object(out))
}

pub(super) fn skill_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "security" => Field::Rename("securityRequirements", requirements_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn skill_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "securityRequirements" => Field::Rename("security", requirements_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

pub(super) fn schemes_map(v: &Value, path: &str, f: fn(&Value, &str) -> Res) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |_, val, p| Ok(Field::Set(f(val, p)?))).map(Value::Object)
}

pub(super) fn scheme_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let type_path = key_path(path, "type");
    let Some(ty) = get(src, "type") else {
        // Already a 1.0 wrapper?
        if src.len() == 1 && SCHEMES.iter().any(|(_, key)| src.contains_key(*key)) {
            return copy_object(v, path);
        }
        return Err(err(&type_path, AdaptErrorKind::Missing));
    };
    let ty = str_at(ty, &type_path)?;
    let (_, key) = SCHEMES
        .iter()
        .find(|(t, _)| *t == ty)
        .ok_or_else(|| err(&type_path, AdaptErrorKind::UnknownSchemeType(ty.to_owned())))?;
    let inner = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "type" => Field::Drop,
            "in" => Field::Rename("location", val.clone()),
            "flows" => Field::Set(flows_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })?;
    let mut out = Map::new();
    out.insert((*key).to_owned(), Value::Object(inner));
    Ok(Value::Object(out))
}

pub(super) fn flows_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let keep = OAUTH_FLOWS.iter().copied().find(|f| present(src, f));
    rebuild(src, path, |k, _, _| {
        Ok(if OAUTH_FLOWS.contains(&k) && Some(k) != keep {
            Field::Drop
        } else {
            Field::Keep
        })
    })
    .map(Value::Object)
}

pub(super) fn scheme_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let found: Vec<&(&str, &str)> = SCHEMES
        .iter()
        .filter(|(_, key)| present(src, key))
        .collect();
    let (ty, key) = match found.as_slice() {
        [one] => **one,
        [] if present(src, "type") => return copy_object(v, path),
        [] => {
            return Err(err(
                path,
                AdaptErrorKind::NoContent(
                    "apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, \
                     openIdConnectSecurityScheme, mtlsSecurityScheme",
                ),
            ));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(_, key)| *key).collect();
            return Err(err(path, AdaptErrorKind::Ambiguous(names.join(", "))));
        }
    };
    let inner_path = key_path(path, key);
    let inner = get(src, key).unwrap_or(&Value::Null);
    let inner = obj(inner, &inner_path)?;
    let mut out = Map::new();
    out.insert("type".into(), Value::String(ty.to_owned()));
    let fields = rebuild(inner, &inner_path, |k, val, _| {
        Ok(match k {
            "location" => Field::Rename("in", val.clone()),
            _ => Field::Keep,
        })
    })?;
    out.extend(fields);
    Ok(Value::Object(out))
}

/// 0.3 `[{name: [scopes]}]` ⇒ 1.0 `[{"schemes": {name: {"list": [scopes]}}}]`.
pub(super) fn requirements_to_v1(v: &Value, path: &str) -> Res {
    map_array(v, path, |item, p| {
        let src = obj(item, p)?;
        let mut schemes = Map::new();
        for (name, scopes) in src {
            let sp = key_path(p, name);
            let list = match scopes {
                Value::Null => Value::Array(Vec::new()),
                Value::Array(_) => scopes.clone(),
                other => return Err(wrong_type(&sp, "array", other)),
            };
            let mut entry = Map::new();
            entry.insert("list".into(), list);
            schemes.insert(name.clone(), Value::Object(entry));
        }
        let mut out = Map::new();
        out.insert("schemes".into(), Value::Object(schemes));
        Ok(Value::Object(out))
    })
}

/// 1.0 `[{"schemes": {name: {"list": [scopes]}}}]` ⇒ 0.3 `[{name: [scopes]}]`.
pub(super) fn requirements_to_v03(v: &Value, path: &str) -> Res {
    map_array(v, path, |item, p| {
        let src = obj(item, p)?;
        let mut out = Map::new();
        let Some(schemes) = get(src, "schemes") else {
            return Ok(Value::Object(out));
        };
        let sp = key_path(p, "schemes");
        for (name, entry) in obj(schemes, &sp)? {
            let ep = key_path(&sp, name);
            let list = match entry {
                Value::Null => Value::Array(Vec::new()),
                other => match get(obj(other, &ep)?, "list") {
                    None => Value::Array(Vec::new()),
                    Some(list @ Value::Array(_)) => list.clone(),
                    Some(bad) => return Err(wrong_type(&key_path(&ep, "list"), "array", bad)),
                },
            };
            out.insert(name.clone(), list);
        }
        Ok(Value::Object(out))
    })
}
