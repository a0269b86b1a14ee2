// Package house holds the house rules of this repository as tests: the shape the code keeps as it grows
// (which layer may import which, and more), checked by `make verify` so a change that breaks a rule fails
// there rather than in review. It has no code of its own.
package house
