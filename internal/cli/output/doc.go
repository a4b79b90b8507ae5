// Package output prints command results the kubectl way: a table for people,
// YAML or JSON for programs (-o table|yaml|json).
package output
