package capm3

import "testing"

// TestOpMetrics reads reconciles and requests out of an operator's
// /metrics and tells the increases between two readings apart.
func TestOpMetrics(t *testing.T) {
	before := parseOpMetrics(`# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="metal3machine",result="error"} 1
controller_runtime_reconcile_total{controller="metal3machine",result="success"} 10
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 5
`)
	after := parseOpMetrics(`controller_runtime_reconcile_total{controller="metal3machine",result="error"} 3
controller_runtime_reconcile_total{controller="metal3machine",result="success"} 30
controller_runtime_reconcile_total{controller="baremetalhost",result="requeue_after"} 7
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 25
rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PUT"} 2
rest_client_requests_total{code="200",host="127.0.0.1:7443",method="GET"} 4
go_goroutines 42
`)
	d := after.since(before)
	if d.reconciles["metal3machine"] != 22 || d.errors["metal3machine"] != 2 || d.reconciles["baremetalhost"] != 7 {
		t.Errorf("reconciles %v, errors %v", d.reconciles, d.errors)
	}
	if d.requests["PATCH"] != 20 || d.requests["PUT"] != 2 || d.requests["GET"] != 4 {
		t.Errorf("requests %v", d.requests)
	}
	want := "reconciles baremetalhost 7 (3.5 a machine, 0 errors), metal3machine 22 (11.0 a machine, 2 errors); its own API requests 26 (13.0 a machine: GET 4, PATCH 20, PUT 2)"
	if got := d.describe(2); got != want {
		t.Errorf("describe = %q\nwant       %q", got, want)
	}
}
