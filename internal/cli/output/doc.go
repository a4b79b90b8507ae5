// Package output prints command results the kubectl way: a table for people,
// YAML or JSON for programs (-o table|yaml|json). StatusCmd is the status
// command of a service run on this machine (cluster local, ironic local):
// the status printed so, then exit 1 when the service is not up.
package output
