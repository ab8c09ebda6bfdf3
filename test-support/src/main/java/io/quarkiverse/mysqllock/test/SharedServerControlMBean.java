package io.quarkiverse.mysqllock.test;

/**
 * The management interface of the shared test server ({@link TestDatabase#shared()}), through which the other class
 * loaders of the JVM (Quarkus tests load the test classes again) reach the one server.
 */
public interface SharedServerControlMBean {
    String getUrl();

    String getUser();

    String getPassword();

    boolean isEmbedded();

    void restart();

    void stop();

    void start();
}
