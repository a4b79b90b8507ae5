package phasecmd

import (
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/phase/executor"
)

func TestWriteEvents(t *testing.T) {
	events := []executor.Event{
		{Type: "Apply", Message: "applying 2 objects"},
		{Type: "Wait", Message: "1 of 2 objects ready"},
		{Type: "Wait", Message: "2 of 2 objects ready"},
		{Type: "Ready", Message: "all 2 objects are ready"},
		{Type: "Wait", Object: "ConfigMap/x", Message: "pending"},
	}
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{"plain lines", false, "[p] applying 2 objects\n[p] 1 of 2 objects ready\n[p] 2 of 2 objects ready\n[p] all 2 objects are ready\n[p] ConfigMap/x: pending\n"},
		{"live line on a terminal", true, "[p] applying 2 objects\n" +
			"\r\033[K[p] 1 of 2 objects ready\r\033[K[p] 2 of 2 objects ready" +
			"\r\033[K[p] all 2 objects are ready\n" +
			"\r\033[K[p] ConfigMap/x: pending\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := make(chan executor.Event, len(events))
			for _, e := range events {
				ch <- e
			}
			close(ch)
			var b strings.Builder
			writeEvents(&b, "p", ch, tt.tty)
			if b.String() != tt.want {
				t.Errorf("got %q\nwant %q", b.String(), tt.want)
			}
		})
	}
}
