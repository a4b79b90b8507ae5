// Package marker finds planted secret values where they must never appear.
//
// A test plants a Marker (a unique value such as
// AIRSHIP-MARKER-BMC-3f9c…) where a credential goes: a Secret of the site,
// the password of a BMC, a SOPS-encrypted value. After the code under test
// ran, a Set of markers scans what a user or another tenant can read:
//
//   - text (command output) with ScanString;
//   - files and directory trees (process logs, rendered output, caches)
//     with ScanPaths; a finding names the file and line;
//   - a Kubernetes cluster with ScanCluster: every object of every listed
//     resource type the API server serves (discovery and the dynamic
//     client), so Events of all namespaces, the status of every object,
//     ConfigMaps and every annotation (last-applied-configuration among
//     them). A Secret's data and stringData are where credentials belong and
//     are not scanned; its metadata is. A finding names the cluster, the
//     object and the field path.
//
// A marker is looked for as it would appear once encoded: plain (its
// alphabet, upper-case letters, digits and '-', is left alone by JSON, YAML
// and URL escaping, so plain also covers those), base64 and base64url at
// any alignment inside a longer value (a Secret's data; an HTTP Basic
// authorization header, base64 of "user:password"), base64 twice (a
// docker config JSON in a Secret) and hex. Compressed or encrypted copies
// are not found: an encrypted copy is not a leak, a compressed one (a Helm
// release in a ConfigMap) would be missed.
package marker
