package metadata

import (
	"encoding/json"
	"fmt"
)

// jsonType is the persisted form of a DataType: the root by name and only
// the parameters the root has, nested types inline, e.g.
//
//	{"root":"DECIMAL","precision":10,"scale":2}
//	{"root":"MAP","key":{"root":"STRING"},"value":{"root":"INT"}}
//	{"root":"ROW","fields":[{"name":"a","type":{"root":"INT"}}]}
type jsonType struct {
	Root      string      `json:"root"`
	Length    *int        `json:"length,omitempty"`
	Precision *int        `json:"precision,omitempty"`
	Scale     *int        `json:"scale,omitempty"`
	Element   *DataType   `json:"element,omitempty"`
	Key       *DataType   `json:"key,omitempty"`
	Value     *DataType   `json:"value,omitempty"`
	Fields    []jsonField `json:"fields,omitempty"`
}

type jsonField struct {
	Name string   `json:"name"`
	Type DataType `json:"type"`
}

// MarshalJSON writes t in the structured form described at jsonType.
func (t DataType) MarshalJSON() ([]byte, error) {
	if t.Root == 0 || int(t.Root) >= len(rootNames) {
		return nil, fmt.Errorf("%w: cannot encode type root %d", ErrInvalidType, t.Root)
	}
	j := jsonType{Root: t.Root.String()}
	switch t.Root {
	case Char, Binary:
		j.Length = &t.Length
	case Decimal:
		j.Precision, j.Scale = &t.Precision, &t.Scale
	case Time, Timestamp, TimestampLTZ:
		j.Precision = &t.Precision
	case Array:
		j.Element = t.Elem
	case Map:
		j.Key, j.Value = t.Elem, t.Value
	case Row:
		j.Fields = make([]jsonField, len(t.Fields))
		for i, f := range t.Fields {
			j.Fields[i] = jsonField{Name: f.Name, Type: f.Type}
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the form MarshalJSON writes and validates the type.
func (t *DataType) UnmarshalJSON(b []byte) error {
	var j jsonType
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidType, err)
	}
	var root TypeRoot
	for r, name := range rootNames {
		if name != "" && name == j.Root {
			root = TypeRoot(r)
		}
	}
	if root == 0 {
		return fmt.Errorf("%w: unknown type root %q", ErrInvalidType, j.Root)
	}
	out := DataType{Root: root}
	get := func(p *int, name string) (int, error) {
		if p == nil {
			return 0, fmt.Errorf("%w: %s type without %s", ErrInvalidType, root, name)
		}
		return *p, nil
	}
	var err error
	switch root {
	case Char, Binary:
		out.Length, err = get(j.Length, "length")
	case Decimal:
		if out.Precision, err = get(j.Precision, "precision"); err == nil {
			out.Scale, err = get(j.Scale, "scale")
		}
	case Time, Timestamp, TimestampLTZ:
		out.Precision, err = get(j.Precision, "precision")
	case Array:
		out.Elem = j.Element
	case Map:
		out.Elem, out.Value = j.Key, j.Value
	case Row:
		out.Fields = make([]Field, len(j.Fields))
		for i, f := range j.Fields {
			out.Fields[i] = Field{Name: f.Name, Type: f.Type}
		}
	}
	if err != nil {
		return err
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*t = out
	return nil
}
