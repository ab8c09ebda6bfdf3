package io.quarkiverse.mysqllock.runtime.engine;

/**
 * One lock name in its two forms: as the application gave it (for messages and handles) and as the server knows it
 * ({@code LockNames.serverName}: namespaced, and hashed when the server could not hold it as it is). Engines
 * key everything by the server name and speak to users with the given one.
 */
public record LockName(String name, String serverName) {

    @Override
    public String toString() {
        return name.equals(serverName) ? name : name + " (" + serverName + " on the server)";
    }
}
