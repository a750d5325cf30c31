package program

import (
	"fmt"
	"io"
	"slices"
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
// usage and flags), then the settings it reads.
func Help(w io.Writer, name, about string) {
	fmt.Fprintln(w, about)
	fmt.Fprintln(w)
	WriteSettings(w, SettingsOf(name))
}
