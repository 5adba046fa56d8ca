package main

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// chart draws fluss's cost ratio to DuckDB, to SQLite and (for W1) to the
// database/sql floor, per workload, on a logarithmic axis centred on 1:
// a bar going up means fluss is slower, down that it is faster. A missing
// figure draws no bar.
func (h *harness) chart(path string) error {
	type group struct {
		label string
		vals  [3]float64 // log10 ratio to DuckDB, SQLite, floor; NaN = none
	}
	var groups []group
	lo, hi := -1.0, 1.0
	for _, r := range h.results {
		g := group{label: r.id, vals: [3]float64{math.NaN(), math.NaN(), math.NaN()}}
		any := false
		for i, peer := range []string{colDuck, colSQLite, colFloor} {
			if x, ok := ratio(r, peer); ok {
				g.vals[i] = log10(x)
				lo, hi = math.Min(lo, g.vals[i]), math.Max(hi, g.vals[i])
				any = true
			}
		}
		if any {
			groups = append(groups, g)
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("fluss's cost relative to each peer (%d rows, median of %d runs; below 1 = fluss faster)", h.g.n, h.cfg.runs)
	p.Y.Label.Text = "fluss cost / peer cost (log scale)"
	p.Y.Min, p.Y.Max = math.Floor(lo), math.Ceil(hi)
	var ticks []plot.Tick
	for e := p.Y.Min; e <= p.Y.Max; e++ {
		ticks = append(ticks, plot.Tick{Value: e, Label: fmt.Sprintf("%gx", math.Pow(10, e))})
		if e < p.Y.Max {
			ticks = append(ticks, plot.Tick{Value: e + math.Log10(2)}, plot.Tick{Value: e + math.Log10(5)})
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(plotter.NewGrid())

	width := vg.Points(9)
	colors := []color.Color{
		color.RGBA{R: 0xe0, G: 0xa0, B: 0x20, A: 0xff}, // DuckDB
		color.RGBA{R: 0x30, G: 0x70, B: 0xc0, A: 0xff}, // SQLite
		color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff}, // floor
	}
	for i, name := range []string{"vs DuckDB", "vs SQLite", "vs database/sql floor"} {
		vals := make(plotter.Values, len(groups))
		for j, g := range groups {
			if v := g.vals[i]; !math.IsNaN(v) {
				vals[j] = v
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.Color = colors[i]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(i-1) * width
		p.Add(bars)
		p.Legend.Add(name, bars)
	}
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 0}, {X: float64(len(groups)) - 0.5, Y: 0}})
	if err != nil {
		return err
	}
	one.Color = color.Black
	p.Add(one)
	p.Legend.Top = true
	labels := make([]string, len(groups))
	for i, g := range groups {
		labels[i] = g.label
	}
	p.NominalX(labels...)
	return p.Save(vg.Length(max(len(groups), 6))*1.1*vg.Inch, 5*vg.Inch, path)
}
