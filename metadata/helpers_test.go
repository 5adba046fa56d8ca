package metadata

import (
	"fmt"
	"strconv"
	"strings"
)

// parseTestType reads the type notation of the golden files: the DDL names
// with parameters, ARRAY<T>, MAP<K,V> and ROW<name T, ...> (or name:T, so a
// type fits in a datadriven argument without spaces).
func parseTestType(s string) (DataType, error) {
	p := &typeParser{s: s}
	t, err := p.parse()
	if err != nil {
		return DataType{}, err
	}
	p.skip()
	if p.i != len(p.s) {
		return DataType{}, fmt.Errorf("trailing text in type %q", s)
	}
	return t, t.Validate()
}

func mustType(s string) DataType {
	t, err := parseTestType(s)
	if err != nil {
		panic(err)
	}
	return t
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) ident() string {
	p.skip()
	j := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= 'A' && p.s[p.i] <= 'Z' || p.s[p.i] >= '0' && p.s[p.i] <= '9') {
		p.i++
	}
	return p.s[j:p.i]
}

func (p *typeParser) expect(c byte) error {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != c {
		return fmt.Errorf("expected %q at %d in %q", c, p.i, p.s)
	}
	p.i++
	return nil
}

func (p *typeParser) peek(c byte) bool {
	p.skip()
	return p.i < len(p.s) && p.s[p.i] == c
}

func (p *typeParser) params() ([]int, error) {
	if !p.peek('(') {
		return nil, nil
	}
	p.i++
	var out []int
	for {
		n, err := strconv.Atoi(p.ident())
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if p.peek(')') {
			p.i++
			return out, nil
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
	}
}

func (p *typeParser) parse() (DataType, error) {
	name := strings.ToUpper(p.ident())
	switch name {
	case "ARRAY":
		if err := p.expect('<'); err != nil {
			return DataType{}, err
		}
		e, err := p.parse()
		if err != nil {
			return DataType{}, err
		}
		return ArrayType(e), p.expect('>')
	case "MAP":
		if err := p.expect('<'); err != nil {
			return DataType{}, err
		}
		k, err := p.parse()
		if err != nil {
			return DataType{}, err
		}
		if err := p.expect(','); err != nil {
			return DataType{}, err
		}
		v, err := p.parse()
		if err != nil {
			return DataType{}, err
		}
		return MapType(k, v), p.expect('>')
	case "ROW":
		if err := p.expect('<'); err != nil {
			return DataType{}, err
		}
		var fields []Field
		for {
			n := p.ident()
			if p.peek(':') {
				p.i++
			}
			t, err := p.parse()
			if err != nil {
				return DataType{}, err
			}
			fields = append(fields, Field{Name: n, Type: t})
			if p.peek('>') {
				p.i++
				return RowType(fields...), nil
			}
			if err := p.expect(','); err != nil {
				return DataType{}, err
			}
		}
	}
	ps, err := p.params()
	if err != nil {
		return DataType{}, err
	}
	arg := func(i, def int) int {
		if i < len(ps) {
			return ps[i]
		}
		return def
	}
	switch name {
	case "BOOLEAN":
		return BooleanType(), nil
	case "TINYINT":
		return TinyIntType(), nil
	case "SMALLINT":
		return SmallIntType(), nil
	case "INT", "INTEGER":
		return IntType(), nil
	case "BIGINT":
		return BigIntType(), nil
	case "FLOAT":
		return FloatType(), nil
	case "DOUBLE":
		return DoubleType(), nil
	case "DECIMAL":
		return DecimalType(arg(0, DefaultDecimalPrec), arg(1, DefaultDecimalScale)), nil
	case "CHAR":
		return CharType(arg(0, 1)), nil
	case "STRING":
		return StringType(), nil
	case "BINARY":
		return BinaryType(arg(0, 1)), nil
	case "BYTES":
		return BytesType(), nil
	case "DATE":
		return DateType(), nil
	case "TIME":
		return TimeType(arg(0, DefaultTimePrecision)), nil
	case "TIMESTAMP":
		return TimestampType(arg(0, DefaultTimestampPrec)), nil
	case "TIMESTAMP_LTZ":
		return TimestampLTZType(arg(0, DefaultTimestampPrec)), nil
	}
	return DataType{}, fmt.Errorf("unknown type %q", name)
}
