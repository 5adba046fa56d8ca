package integration

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
)

// Profile carries GORM's default: tags: constants GORM also sends itself
// for a zero field, and a database default (CURRENT_TIMESTAMP) it leaves
// to the table.
type Profile struct {
	ID        uint      `gorm:"primaryKey"`
	Name      string    `gorm:"size:64;not null;default:anon"`
	Active    bool      `gorm:"default:true"`
	Level     int       `gorm:"default:3"`
	Score     float64   `gorm:"default:1.5"`
	Note      string    `gorm:"size:191"`
	Joined    time.Time `gorm:"default:CURRENT_TIMESTAMP"`
	CreatedAt time.Time
}

// GORM's default: tags make column DEFAULTs that a second AutoMigrate
// finds unchanged; Omit and Select create rows whose other columns take
// the table's defaults; CreatedAt, made in a process zone other than UTC,
// reads back as the same instant.
func TestGormDefaults(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	local := time.Local
	time.Local = ny // GORM's CreatedAt is time.Now() in the process zone
	t.Cleanup(func() { time.Local = local })

	db := openGorm(t, true)
	require.NoError(t, db.AutoMigrate(&Profile{}))
	require.NoError(t, db.AutoMigrate(&Profile{}), "the second AutoMigrate finds the defaults it declared")

	var defaults []struct {
		ColumnName    string
		ColumnDefault sql.NullString
	}
	require.NoError(t, db.Raw(`SELECT column_name, column_default FROM information_schema.columns
		WHERE table_name = 'profiles' ORDER BY ordinal_position`).Scan(&defaults).Error)
	got := map[string]string{}
	for _, d := range defaults {
		if d.ColumnDefault.Valid {
			got[d.ColumnName] = d.ColumnDefault.String
		}
	}
	require.Equal(t, map[string]string{"name": "anon", "active": "1", "level": "3", "score": "1.5", "joined": "CURRENT_TIMESTAMP"}, got)

	before := time.Now()
	full := Profile{Name: "ann", Level: 7, Note: "full"}
	require.NoError(t, db.Create(&full).Error)
	omit := Profile{Name: "bob", Level: 9, Score: 2.5, Note: "omit"}
	require.NoError(t, db.Omit("Level", "Score").Create(&omit).Error)
	sel := Profile{Name: "cy", Level: 9, Score: 2.5, Note: "select"}
	require.NoError(t, db.Select("Note").Create(&sel).Error)
	after := time.Now()

	var rows []Profile
	require.NoError(t, db.Order("id").Find(&rows).Error)
	require.Len(t, rows, 3)
	type shown struct {
		Name   string
		Active bool
		Level  int
		Score  float64
		Note   string
	}
	var cells []shown
	for _, r := range rows {
		cells = append(cells, shown{r.Name, r.Active, r.Level, r.Score, r.Note})
		require.False(t, r.Joined.Before(before.Truncate(time.Second)) || r.Joined.After(after),
			"Joined takes the statement's time: %v not in [%v, %v]", r.Joined, before, after)
	}
	require.Equal(t, []shown{
		{"ann", true, 7, 1.5, "full"}, // GORM sends the constant defaults of zero fields itself
		{"bob", true, 3, 1.5, "omit"},
		{"anon", true, 3, 1.5, "select"},
	}, cells)

	require.Equal(t, ny, full.CreatedAt.Location())
	require.True(t, rows[0].CreatedAt.Equal(full.CreatedAt.Truncate(time.Millisecond)),
		"CreatedAt %v made in New York reads back as the same instant: %v", full.CreatedAt, rows[0].CreatedAt)
	require.True(t, rows[2].CreatedAt.Equal(sel.CreatedAt.Truncate(time.Millisecond)), "Select keeps GORM's CreatedAt")

	// Updating a row by its key through a column list keeps the rest.
	require.NoError(t, db.Model(&Profile{}).Where("id = ?", omit.ID).Update("note", "changed").Error)
	var bob Profile
	require.NoError(t, db.First(&bob, omit.ID).Error)
	require.Equal(t, "changed", bob.Note)
	require.Equal(t, 3, bob.Level)
}

// Shelf carries bun's default: tags; bun's MySQL dialect writes DEFAULT
// in VALUES for a zero field marked nullzero.
type Shelf struct {
	bun.BaseModel `bun:"table:shelves"`

	ID      int64     `bun:"id,pk,autoincrement"`
	Label   string    `bun:"label,notnull,nullzero,default:'spare'"`
	Slots   int32     `bun:"slots,nullzero,default:12"`
	Added   time.Time `bun:"added,nullzero,notnull,default:current_timestamp"`
	Comment string    `bun:"comment"`
}

func TestBunDefaults(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open("fluss", t.TempDir())
	require.NoError(t, err)
	db := bun.NewDB(sqldb, mysqldialect.New())
	t.Cleanup(func() { require.NoError(t, db.Close()) })

	_, err = db.NewCreateTable().Model((*Shelf)(nil)).Exec(ctx)
	require.NoError(t, err)
	before := time.Now().Truncate(time.Second)
	_, err = db.NewInsert().Model(&Shelf{Comment: "zero"}).Exec(ctx)
	require.NoError(t, err)
	_, err = db.NewInsert().Model(&Shelf{Label: "top", Slots: 4, Comment: "given"}).Exec(ctx)
	require.NoError(t, err)
	after := time.Now()

	var shelves []Shelf
	require.NoError(t, db.NewSelect().Model(&shelves).Order("id").Scan(ctx))
	require.Len(t, shelves, 2)
	require.Equal(t, []string{"spare", "top"}, []string{shelves[0].Label, shelves[1].Label})
	require.Equal(t, []int32{12, 4}, []int32{shelves[0].Slots, shelves[1].Slots})
	for _, s := range shelves {
		require.False(t, s.Added.Before(before) || s.Added.After(after), "%v not in [%v, %v]", s.Added, before, after)
	}
}
