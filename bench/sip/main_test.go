package sip

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestMain quiets controller-runtime's complaint that no logger is set and
// client-go's notes on watches ending: the benchmark's clients log nothing
// worth reading.
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	// The SIPCluster watch ends when a run does; client-go logs that.
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
