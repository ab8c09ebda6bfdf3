package io.quarkiverse.mysqllock.test;

/** The shared test server, published as a platform MBean: see {@link SharedServerControlMBean}. */
final class SharedServerControl implements SharedServerControlMBean {
    private final TestDatabase database;

    SharedServerControl(TestDatabase database) {
        this.database = database;
    }

    @Override
    public String getUrl() {
        return database.jdbcUrl();
    }

    @Override
    public String getUser() {
        return database.user();
    }

    @Override
    public String getPassword() {
        return database.password();
    }

    @Override
    public boolean isEmbedded() {
        return database.isEmbedded();
    }

    @Override
    public void restart() {
        database.restart();
    }

    @Override
    public void stop() {
        database.stop();
    }

    @Override
    public void start() {
        database.start();
    }
}
