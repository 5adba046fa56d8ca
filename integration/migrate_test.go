package integration

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/flusslite/fluss"
)

// Models with a belongs-to (Post.Writer) and a has-many (Writer.Posts,
// Post.Comments): GORM's AutoMigrate declares a foreign key for each.
type Writer struct {
	ID    uint
	Name  string `gorm:"size:64"`
	Posts []Post
}

type Post struct {
	ID       uint
	Title    string `gorm:"size:128"`
	WriterID uint
	Writer   Writer
	Comments []Comment
}

type Comment struct {
	ID     uint
	PostID uint
	Body   string
}

// statementLog records the statements the driver runs.
type statementLog struct {
	mu  sync.Mutex
	sql []string
}

func (l *statementLog) hook(_ context.Context, q fluss.QueryInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sql = append(l.sql, q.SQL)
}

// take returns the statements recorded since the last take.
func (l *statementLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.sql
	l.sql = nil
	return out
}

// schemaChanges are the statements among sql that change the schema.
func schemaChanges(sql []string) []string {
	var out []string
	for _, q := range sql {
		switch w, _, _ := strings.Cut(strings.TrimSpace(q), " "); strings.ToUpper(w) {
		case "CREATE", "ALTER", "DROP":
			out = append(out, q)
		}
	}
	return out
}

func openLoggedGorm(t *testing.T) (*gorm.DB, *statementLog) {
	t.Helper()
	log := &statementLog{}
	ctr, err := fluss.NewConnector(t.TempDir(), fluss.WithQueryHook(log.hook))
	require.NoError(t, err)
	sqlDB := sql.OpenDB(ctr)
	t.Cleanup(func() { require.NoError(t, sqlDB.Close()) })
	db, err := gorm.Open(mysql.New(mysql.Config{Conn: sqlDB}), &gorm.Config{
		SkipDefaultTransaction: true,
		Logger:                 logger.Default.LogMode(logger.Silent),
	})
	require.NoError(t, err)
	return db, log
}

// AutoMigrate declares the associations' foreign keys, which fluss
// records; a second run finds them all (HasConstraint asks
// information_schema.table_constraints) and sends nothing that changes
// the schema. The migrator's constraint calls work on them, and
// DropTable (SET FOREIGN_KEY_CHECKS = 0, DROP TABLE ... CASCADE, SET
// FOREIGN_KEY_CHECKS = 1) drops the tables.
func TestGormMigratorForeignKeys(t *testing.T) {
	db, log := openLoggedGorm(t)
	models := []any{&Writer{}, &Post{}, &Comment{}}
	require.NoError(t, db.AutoMigrate(models...))
	first := schemaChanges(log.take())
	require.NotEmpty(t, first)
	declared := strings.Join(first, "\n")
	require.Contains(t, declared, "CONSTRAINT `fk_writers_posts` FOREIGN KEY (`writer_id`) REFERENCES `writers`(`id`)")
	require.Contains(t, declared, "CONSTRAINT `fk_posts_comments` FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`)")

	m := db.Migrator()
	require.True(t, m.HasConstraint(&Writer{}, "Posts"), "has-many: the constraint on posts, named by the association")
	require.True(t, m.HasConstraint(&Post{}, "fk_writers_posts"))
	require.True(t, m.HasConstraint(&Post{}, "Comments"))
	require.False(t, m.HasConstraint(&Post{}, "fk_nope"))

	require.NoError(t, db.AutoMigrate(models...), "a second AutoMigrate")
	require.Empty(t, schemaChanges(log.take()), "a second AutoMigrate changes nothing")

	// The keys are not enforced: a post may name an author that does
	// not exist.
	require.NoError(t, db.Create(&Post{Title: "orphan", WriterID: 99}).Error)

	// DropConstraint and CreateConstraint, as a model change makes
	// AutoMigrate send them.
	require.NoError(t, m.DropConstraint(&Post{}, "Comments"))
	require.False(t, m.HasConstraint(&Post{}, "Comments"))
	require.Error(t, m.DropConstraint(&Post{}, "Comments"), "an unknown constraint is an error")
	require.NoError(t, m.CreateConstraint(&Post{}, "Comments"))
	require.True(t, m.HasConstraint(&Post{}, "Comments"))
	log.take()
	require.NoError(t, db.AutoMigrate(models...))
	require.Empty(t, schemaChanges(log.take()))

	// DropTable of a parent: GORM turns the checks off around it.
	require.NoError(t, m.DropTable(&Writer{}))
	require.False(t, m.HasTable(&Writer{}))
	require.True(t, m.HasTable(&Post{}))
	require.NoError(t, m.DropTable(&Comment{}, &Post{}))
	require.False(t, m.HasTable(&Post{}))
	require.False(t, m.HasTable(&Comment{}))

	// The checks are back on for the connection GORM used, and a
	// parent another table's key references is not dropped.
	require.NoError(t, db.AutoMigrate(models...))
	err := db.Exec("DROP TABLE writers").Error
	require.ErrorIs(t, err, fluss.ErrConstraint)
	require.ErrorContains(t, err, "fk_writers_posts")
}

type BunAuthor struct {
	bun.BaseModel `bun:"table:bun_authors"`
	ID            int64 `bun:",pk,autoincrement"`
	Name          string
}

type BunPost struct {
	bun.BaseModel `bun:"table:bun_posts"`
	ID            int64 `bun:",pk,autoincrement"`
	AuthorID      int64
	Author        *BunAuthor `bun:"rel:belongs-to,join:author_id=id"`
}

// bun sends a foreign key for each belongs-to relation with
// WithForeignKeys, unnamed (MySQL names it <table>_ibfk_<n>), and one
// given by ForeignKey.
func TestBunForeignKeys(t *testing.T) {
	ctx := context.Background()
	sqldb, err := sql.Open("fluss", t.TempDir())
	require.NoError(t, err)
	db := bun.NewDB(sqldb, mysqldialect.New())
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	_, err = db.NewCreateTable().Model((*BunAuthor)(nil)).Exec(ctx)
	require.NoError(t, err)
	_, err = db.NewCreateTable().Model((*BunPost)(nil)).WithForeignKeys().
		ForeignKey("(`author_id`) REFERENCES `bun_authors` (`id`) ON DELETE CASCADE").Exec(ctx)
	require.NoError(t, err)
	var names []string
	require.NoError(t, db.NewRaw("SELECT constraint_name FROM information_schema.referential_constraints WHERE table_name = ? ORDER BY constraint_name", "bun_posts").Scan(ctx, &names))
	require.Equal(t, []string{"bun_posts_ibfk_1", "bun_posts_ibfk_2"}, names)
	var rule string
	require.NoError(t, db.NewRaw("SELECT delete_rule FROM information_schema.referential_constraints WHERE constraint_name = ?", "bun_posts_ibfk_2").Scan(ctx, &rule))
	require.Equal(t, "CASCADE", rule)

	// bun drops the child first; the parent then goes too.
	_, err = db.NewDropTable().Model((*BunPost)(nil)).IfExists().Exec(ctx)
	require.NoError(t, err)
	_, err = db.NewDropTable().Model((*BunAuthor)(nil)).IfExists().Exec(ctx)
	require.NoError(t, err)
}
