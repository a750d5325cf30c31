package program

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/convida/convida/pkg/provider"
)

// Bootstrap is the name under which Settings lists what the api's
// administrative commands (merchant create, key create|revoke|list) read.
const Bootstrap = "bootstrap"

// WantsHelp reports whether a program's arguments ask for its help: -h,
// -help, --help or help first.
func WantsHelp(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// SettingsOf returns the settings program reads, in the order of Settings:
// standalone reads them all.
func SettingsOf(program string) []Setting {
	var out []Setting
	for _, s := range Settings {
		if program == "standalone" || s.Programs == nil || slices.Contains(s.Programs, program) {
			out = append(out, s)
		}
	}
	return out
}

// WriteSettings writes settings as the environment part of a help text:
// each NAME=default, then its meaning.
func WriteSettings(w io.Writer, settings []Setting) {
	fmt.Fprintln(w, "Environment (NAME=default):")
	for _, s := range settings {
		fmt.Fprintf(w, "  %s=%s\n        %s\n", s.Name, s.Default, s.Meaning)
	}
}

// Help writes the help of the program name: about (what it does, its
// usage and flags), the platforms whose webhooks it takes (the ingest and
// the standalone), then the settings it reads.
func Help(w io.Writer, name, about string) {
	fmt.Fprintln(w, about)
	fmt.Fprintln(w)
	if name == "ingest" || name == "standalone" {
		fmt.Fprintln(w, "Platforms (webhooks at /api/webhooks/{platform}/{merchant id}):")
		for _, d := range provider.All() {
			fmt.Fprintln(w, PlatformHelp(d))
		}
		fmt.Fprintln(w)
	}
	WriteSettings(w, SettingsOf(name))
}

// PlatformHelp is a platform's line in the help: its name, title and how
// its webhook authenticates, from its descriptor.
func PlatformHelp(d provider.Descriptor) string {
	var how string
	switch a := d.Webhook; {
	case a.Place == provider.InBody:
		how = "the " + a.Setting + " setting, sent in the body's " + a.Name
	case a.Place == provider.InHeader && a.Signed:
		how = "the " + a.Name + " header, signed with the " + a.Setting + " setting"
	case a.Place == provider.InHeader:
		how = "the " + a.Setting + " setting, sent in the " + a.Name + " header"
	case a.Place == provider.InQuery && a.Signed:
		how = "the " + a.Name + " query parameter, signed with the " + a.Setting + " setting"
	default:
		how = "the " + a.Setting + " setting, sent in the " + a.Name + " query parameter"
	}
	return fmt.Sprintf("  %-8s %s, authenticated by %s", d.Name, d.Title, how)
}

// titlesWith names the platforms of capability c ("Guru or Yampi"), for
// the meaning of a setting that concerns them alone: read from the
// descriptors, it names a platform added later without an edit here.
func titlesWith(c provider.Capability) string {
	var titles []string
	for _, d := range provider.With(c) {
		titles = append(titles, d.Title)
	}
	if len(titles) < 2 {
		return strings.Join(titles, "")
	}
	return strings.Join(titles[:len(titles)-1], ", ") + " or " + titles[len(titles)-1]
}

// CheckArgs refuses the arguments of a program that takes none but its
// help: an unknown subcommand or flag is an error, not ignored.
func CheckArgs(name string, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return fmt.Errorf("unknown argument %q: %s takes none (see %s --help)", args[0], name, name)
}
