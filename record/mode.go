package record

import "encoding/json"

// InMode is a run with the mode in front (simrun real --json).
type InMode struct {
	Mode string `json:"mode"`
	*Run
}

// MarshalJSON writes {"mode": ..., then the run's keys}: the
// run's own MarshalJSON would otherwise be promoted and drop the mode.
func (r InMode) MarshalJSON() ([]byte, error) {
	mode, err := json.Marshal(struct {
		Mode string `json:"mode"`
	}{r.Mode})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(r.Run)
	if err != nil {
		return nil, err
	}
	if len(body) <= 2 {
		return mode, nil
	}
	return append(append(mode[:len(mode)-1:len(mode)-1], ','), body[1:]...), nil
}
