//! Services as kube-apiserver 1.20.2 writes them: the defaults its decoding sets
//! (`SetDefaults_Service`: `type`, `sessionAffinity`, each port's `protocol` and `targetPort`,
//! `externalTrafficPolicy` for node ports), the cluster IP and node ports its REST storage
//! allocates (from envtest's ranges, `10.0.0.0/24` and `30000-32767`), and the `status` every
//! Service carries (`{"loadBalancer": {}}`: the Go struct is never omitted).
//!
//! Allocation takes the lowest free address or port (the real allocators pick at random): tests
//! read what was allocated, never guess it.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use kcache_core::{Status, StatusCause};
use serde_json::{json, Value};

use crate::http::responses::ApiError;
use crate::resources::ResourceInfo;
use crate::state::ServerState;
use crate::storage::{Filter, ListAt};

/// The service IP range: `10.0.0.0/24`, kube-apiserver's default and envtest's.
const SERVICE_NET: [u8; 3] = [10, 0, 0];
/// The node port range (`--service-node-port-range`'s default).
const NODE_PORTS: std::ops::RangeInclusive<u16> = 30000..=32767;

/// Whether `res` is the core Service resource.
pub(crate) fn is_service(res: &ResourceInfo) -> bool {
    res.api.group.is_empty() && res.api.plural == "services"
}

/// What decoding a Service defaults, on create and on update.
pub(crate) fn set_defaults(obj: &mut Value) {
    let spec = &mut obj["spec"];
    if !spec.is_object() {
        *spec = json!({});
    }
    for (field, default) in [("type", "ClusterIP"), ("sessionAffinity", "None")] {
        if spec[field].as_str().is_none_or(str::is_empty) {
            spec[field] = json!(default);
        }
    }
    if needs_node_ports(spec)
        && spec["externalTrafficPolicy"]
            .as_str()
            .is_none_or(str::is_empty)
    {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    if let Some(ports) = spec["ports"].as_array_mut() {
        for p in ports.iter_mut().filter(|p| p.is_object()) {
            if p["protocol"].as_str().is_none_or(str::is_empty) {
                p["protocol"] = json!("TCP");
            }
            let unset = match &p["targetPort"] {
                Value::Null => true,
                Value::Number(n) => n.as_i64() == Some(0),
                Value::String(s) => s.is_empty(),
                _ => false,
            };
            if unset {
                p["targetPort"] = p["port"].clone();
            }
        }
    }
}

fn needs_cluster_ip(spec: &Value) -> bool {
    spec["type"].as_str() != Some("ExternalName")
}

fn needs_node_ports(spec: &Value) -> bool {
    matches!(spec["type"].as_str(), Some("NodePort" | "LoadBalancer"))
}

/// The cluster IPs and node ports every stored Service holds.
fn allocated(state: &ServerState, res: &ResourceInfo) -> (BTreeSet<String>, BTreeSet<u64>) {
    let mut ips = BTreeSet::new();
    let mut ports = BTreeSet::new();
    let all = state
        .storage
        .list(res, ListAt::Current, &Filter::default(), None, None)
        .map(|p| p.items)
        .unwrap_or_default();
    for s in all {
        let v = s.value();
        if let Some(ip) = v["spec"]["clusterIP"].as_str() {
            ips.insert(ip.to_string());
        }
        for p in v["spec"]["ports"].as_array().into_iter().flatten() {
            if let Some(n) = p["nodePort"].as_u64() {
                ports.insert(n);
            }
        }
    }
    (ips, ports)
}

fn range_full(what: &str) -> ApiError {
    Status::failure(
        500,
        "InternalError",
        format!("Internal error occurred: failed to allocate a {what}: range is full"),
    )
    .into()
}

/// Gives a new Service its cluster IP (unless it names one, or `None`, or is an ExternalName)
/// and node ports, and its empty status. 422 when the IP it names is taken.
pub(crate) fn allocate_on_create(
    state: &ServerState,
    res: &ResourceInfo,
    obj: &mut Value,
) -> Result<(), ApiError> {
    let (ips, ports) = allocated(state, res);
    let name = obj["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let spec = &mut obj["spec"];
    if needs_cluster_ip(spec) {
        let ip = match spec["clusterIP"].as_str().filter(|s| !s.is_empty()) {
            Some("None") => "None".to_string(),
            Some(ip) if ips.contains(ip) => {
                let cause = StatusCause {
                    type_: "FieldValueInvalid".into(),
                    message: format!("Invalid value: []string{{{ip:?}}}: failed to allocated ip:{ip} with error:provided IP is already allocated"),
                    field: "spec.clusterIPs".into(),
                };
                return Err(ApiError::invalid(res, &name, vec![cause]));
            }
            Some(ip) => ip.to_string(),
            None => (1..=254u8)
                .map(|h| Ipv4Addr::new(SERVICE_NET[0], SERVICE_NET[1], SERVICE_NET[2], h))
                .map(|a| a.to_string())
                .find(|a| !ips.contains(a))
                .ok_or_else(|| range_full("serviceIP"))?,
        };
        spec["clusterIP"] = json!(ip);
        spec["clusterIPs"] = json!([ip]);
    }
    allocate_node_ports(spec, ports)?;
    obj["status"] = json!({"loadBalancer": {}});
    Ok(())
}

/// Node ports for the ports of a NodePort or LoadBalancer Service that have none.
fn allocate_node_ports(spec: &mut Value, mut used: BTreeSet<u64>) -> Result<(), ApiError> {
    if !needs_node_ports(spec) {
        return Ok(());
    }
    for p in spec["ports"].as_array_mut().into_iter().flatten() {
        if p["nodePort"].as_u64().is_some_and(|n| n != 0) {
            continue;
        }
        let free = NODE_PORTS
            .map(u64::from)
            .find(|n| !used.contains(n))
            .ok_or_else(|| range_full("nodePort"))?;
        used.insert(free);
        p["nodePort"] = json!(free);
    }
    Ok(())
}

/// An update of `cur` to `next`: the cluster IP may not be unset (1.20.2 does not carry it
/// over), new node ports are allocated, and the status stays a Service's.
pub(crate) fn check_update(
    state: &ServerState,
    res: &ResourceInfo,
    cur: &Value,
    next: &mut Value,
) -> Result<(), ApiError> {
    let had_ip = cur["spec"]["clusterIP"]
        .as_str()
        .is_some_and(|s| !s.is_empty());
    let has_ip = next["spec"]["clusterIP"]
        .as_str()
        .is_some_and(|s| !s.is_empty());
    if had_ip && !has_ip && needs_cluster_ip(&next["spec"]) {
        let cause = StatusCause {
            type_: "FieldValueInvalid".into(),
            message: "Invalid value: []string(nil): primary clusterIP can not be unset".into(),
            field: "spec.clusterIPs[0]".into(),
        };
        let name = cur["metadata"]["name"].as_str().unwrap_or_default();
        return Err(ApiError::invalid(res, name, vec![cause]));
    }
    if has_ip && next["spec"]["clusterIPs"].is_null() {
        next["spec"]["clusterIPs"] = json!([next["spec"]["clusterIP"]]);
    }
    if needs_node_ports(&next["spec"]) {
        let (_, ports) = allocated(state, res);
        allocate_node_ports(&mut next["spec"], ports)?;
    }
    if !next["status"].is_object() {
        next["status"] = json!({"loadBalancer": {}});
    }
    Ok(())
}
