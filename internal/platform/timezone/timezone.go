package timezone

import (
	_ "embed"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // the zones resolve without the host's zoneinfo
)

// zoneList is zones.txt: UTC, then one zone per country region of the tz database's zone.tab.
//
//go:embed zones.txt
var zoneList string

// Option is one zone a person can pick: Name is what the API stores and accepts, DisplayName what a picker
// shows.
type Option struct {
	// Name is the IANA zone name, for example "America/New_York".
	Name string
	// DisplayName is the zone's UTC offset at the time asked for and its name in words, for example
	// "(UTC-05:00) America/New York".
	DisplayName string
}

// Zones are the offered zones, resolved: UTC first, then by name. Load them once (the composition root does)
// and share them; they never change, since the list and the tz database are compiled in.
type Zones []*time.Location

// Load resolves zones.txt: loading the ~400 zones takes about 17 ms, Options afterwards well under one. A name
// the tz database does not resolve is an error: the list and the database ship together, and a test proves
// they agree.
func Load() (Zones, error) {
	var out Zones
	for _, line := range strings.Split(zoneList, "\n") {
		name := strings.TrimSpace(line)
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			return nil, fmt.Errorf("time zone %s: %w", name, err)
		}
		out = append(out, loc)
	}
	return out, nil
}

// Options returns every zone, each shown with its offset at now (offsets move with daylight saving time, so a
// picker shows the one in force).
func (z Zones) Options(now time.Time) []Option {
	out := make([]Option, len(z))
	for i, loc := range z {
		out[i] = Option{Name: loc.String(), DisplayName: displayName(loc.String(), now.In(loc))}
	}
	return out
}

// displayName is "(UTC+05:30) Asia/Kolkata" with underscores read as spaces; UTC is just "UTC".
func displayName(name string, at time.Time) string {
	if name == "UTC" {
		return name
	}
	_, offset := at.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	return fmt.Sprintf("(UTC%c%02d:%02d) %s", sign, offset/3600, offset%3600/60, strings.ReplaceAll(name, "_", " "))
}
