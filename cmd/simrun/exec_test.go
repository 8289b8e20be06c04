package main

import (
	"os/exec"
	"testing"
)

func runGo(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("go", args...).CombinedOutput()
	return string(out), err
}

func runCmd(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
