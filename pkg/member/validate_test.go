package member

import (
	"strings"
	"testing"

	"github.com/convida/convida/pkg/apperr"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	valid := Member{Email: "ana@example.com", Name: "Ana", ExternalID: "cli-1"}
	with := func(f func(*Member)) Member { m := valid; f(&m); return m }
	tests := []struct {
		name string
		m    Member
		want string // the message; "" for valid
	}{
		{"a member is valid", valid, ""},
		{"no status means the default", with(func(m *Member) { m.Status = "" }), ""},
		{"a known status", with(func(m *Member) { m.Status = StatusBlocked }), ""},
		{"an external id of 255 bytes", with(func(m *Member) { m.ExternalID = strings.Repeat("x", MaxExternalID) }), ""},
		{"the email is required", with(func(m *Member) { m.Email = " " }), "email: is required"},
		{"the email is checked first", Member{}, "email: is required"},
		{"a display name is no bare address", with(func(m *Member) { m.Email = "Ana <ana@example.com>" }), "email: is not a valid email address"},
		{"an address needs a domain", with(func(m *Member) { m.Email = "ana" }), "email: is not a valid email address"},
		{"an address is at most 254 characters", with(func(m *Member) { m.Email = strings.Repeat("a", 250) + "@x.io" }), "email: must be at most 254 characters"},
		{"an address of 254 characters", with(func(m *Member) { m.Email = strings.Repeat("a", 249) + "@x.io" }), ""},
		{"a name of 200 characters", with(func(m *Member) { m.Name = strings.Repeat("ç", 200) }), ""},
		{"a name over 200 characters", with(func(m *Member) { m.Name = strings.Repeat("ç", 201) }), "name: must be at most 200 characters"},
		{"180,000 angle brackets", with(func(m *Member) { m.Name = strings.Repeat("<", 180_000) }), "name: must be at most 200 characters"},
		{"an external id of 255 characters", with(func(m *Member) { m.ExternalID = strings.Repeat("ã", 255) }), ""},
		{"a document of 255 characters", with(func(m *Member) { m.Document = strings.Repeat("1", 255) }), ""},
		{"a document over 255 characters", with(func(m *Member) { m.Document = strings.Repeat("1", 256) }), "document: must be at most 255 characters"},
		{"a phone over 255 characters", with(func(m *Member) { m.Phone = strings.Repeat("9", 256) }), "phone: must be at most 255 characters"},
		{"metadata of 16 KiB", with(func(m *Member) { m.Metadata = map[string]any{"k": strings.Repeat("x", 16384-8)} }), ""},
		{"metadata over 16 KiB", with(func(m *Member) { m.Metadata = map[string]any{"k": strings.Repeat("x", 16384-7)} }),
			"metadata: must be at most 16384 bytes once encoded as JSON"},
		{"the name is required", with(func(m *Member) { m.Name = "\t" }), "name: is required"},
		{"the external id is bounded", with(func(m *Member) { m.ExternalID = strings.Repeat("x", MaxExternalID+1) }), "external_id: must be at most 255 characters"},
		{"an unknown status", with(func(m *Member) { m.Status = "deleted" }), "status: must be active, inactive or blocked"},
		{"statuses are lower case", with(func(m *Member) { m.Status = "ACTIVE" }), "status: must be active, inactive or blocked"},
	}
	for _, tt := range tests {
		if err := tt.m.Validate(); !invalidAs(err, tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestUpdateValidate(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	tests := []struct {
		name string
		upd  Update
		want string
	}{
		{"an empty update is valid", Update{}, ""},
		{"every field", Update{Name: str("Zé"), ExternalID: str(""), Status: str(StatusInactive), Metadata: map[string]any{"k": 1}}, ""},
		{"a name set must not be blank", Update{Name: str(" ")}, "name: must not be empty"},
		{"the external id is bounded", Update{ExternalID: str(strings.Repeat("x", 256))}, "external_id: must be at most 255 characters"},
		{"a name of 200 characters", Update{Name: str(strings.Repeat("é", 200))}, ""},
		{"the name is bounded", Update{Name: str(strings.Repeat("<", 180_000))}, "name: must be at most 200 characters"},
		{"the metadata is bounded", Update{Metadata: map[string]any{"k": strings.Repeat("x", 16384)}},
			"metadata: must be at most 16384 bytes once encoded as JSON"},
		{"an empty status is refused", Update{Status: str("")}, "status: must be active, inactive or blocked"},
		{"the name before the status", Update{Name: str(""), Status: str("gone")}, "name: must not be empty"},
		{"a valid field with a refused one", Update{Name: str("Zé"), Status: str("gone")}, "status: must be active, inactive or blocked"},
	}
	for _, tt := range tests {
		if err := tt.upd.Validate(); !invalidAs(err, tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
	if err := CheckExternalID("externalId", strings.Repeat("x", 256)); apperr.MessageOf(err) != "externalId: must be at most 255 characters" {
		t.Errorf("CheckExternalID names the field as given: %v", err)
	}
}

// invalidAs reports whether err is nil for want "", or an apperr.Invalid
// with the message want.
func invalidAs(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return apperr.Is(err, apperr.Invalid) && apperr.MessageOf(err) == want
}
