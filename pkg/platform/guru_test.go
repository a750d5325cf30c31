package platform

import "testing"

func TestBilledCycles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body   string
		want   int64
		wantOK bool
	}{
		{`{"charged_times":3}`, 3, true},
		{`{"charged_times":"12"}`, 12, true},
		{`{"current_cycle":4}`, 4, true},
		{`{"cycle":0}`, 0, true},
		{`{"data":{"charged_times":6}}`, 6, true},
		{`{"cycle":1,"data":{"charged_times":6}}`, 6, true},
		{`{"charged_times":1e2}`, 0, false},
		{`{"charged_times":"x","cycle":"2"}`, 2, true},
		{`{"charged_times":99999999999}`, 0, false},
		{`{}`, 0, false},
		{`null`, 0, false},
		{``, 0, false},
	}
	for _, tt := range tests {
		got, ok := billedCycles([]byte(tt.body))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("billedCycles(%s) = %d, %v; want %d, %v", tt.body, got, ok, tt.want, tt.wantOK)
		}
	}
}
