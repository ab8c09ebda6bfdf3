package io.quarkiverse.mysqllock.runtime.jdbc;

import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Refuses datasources on which a named lock can be dropped silently.
 * <p>
 * A named lock lives exactly as long as one server session. With driver auto-reconnect the same
 * {@code java.sql.Connection} goes on working on a new session after a failure, while another session got the lock;
 * with a multi-host URL it may even be a session on another server, where the lock was never taken.
 */
public final class JdbcUrlPolicy {

    private static final Pattern MULTI_HOST_SCHEME = Pattern
            .compile(
                    "^jdbc:(mysql:(replication|loadbalance)|mysql\\+srv(:\\w+)?|mariadb:(replication|loadbalance|sequential|aurora|failover|load-balance-read)):.*");
    private static final Pattern AUTHORITY = Pattern.compile("^jdbc:[a-z+:]+//([^/?]*)");
    /** In the query string, and in a host's own properties: {@code address=(host=h)(k=v)}, {@code (host=h,k=v)}. */
    private static final Pattern RECONNECT = Pattern.compile(
            "(?i)(?:^|[?&;(,])\\s*(autoReconnect|autoReconnectForPools)\\s*=\\s*(true|yes|1)\\s*(?=$|[&;),])");

    private JdbcUrlPolicy() {
    }

    /**
     * @param dataSourceName names the property to change in the explanation
     * @return why named locks cannot be held safely on connections of this URL, or empty if they can
     */
    public static Optional<String> namedLockProblem(String jdbcUrl, Properties properties, String dataSourceName) {
        if (jdbcUrl == null) {
            return Optional.empty();
        }
        String url = jdbcUrl.strip();
        String lower = url.toLowerCase(Locale.ROOT);
        if (MULTI_HOST_SCHEME.matcher(lower).matches()) {
            return Optional.of("its JDBC URL '" + url + "' names a replication, load-balancing or failover group."
                    + " Named locks live in one server's memory and are not replicated: a connection that fails over"
                    + " reaches a server where the lock is free");
        }
        Matcher authority = AUTHORITY.matcher(lower);
        // commas inside a host's parentheses separate its properties, not hosts: (host=h,port=3306)
        String hosts = authority.find() ? authority.group(1).replaceAll("\\([^)]*\\)", "()") : "";
        if (hosts.contains(",") || hosts.indexOf("address=") != hosts.lastIndexOf("address=")) {
            return Optional.of("its JDBC URL '" + url + "' lists several hosts (failover)."
                    + " Named locks live in one server's memory and are not replicated: a connection that fails over"
                    + " reaches a server where the lock is free");
        }
        Matcher reconnect = RECONNECT.matcher(url);
        if (reconnect.find()) {
            return Optional.of("its JDBC URL '" + url + "' sets " + reconnect.group(1) + "=" + reconnect.group(2)
                    + ". After a reconnect the connection silently works on a new server session that holds none of"
                    + " its named locks. Remove " + reconnect.group(1) + " from the URL");
        }
        if (properties != null) {
            for (String key : new String[] { "autoReconnect", "autoReconnectForPools" }) {
                String value = properties.getProperty(key);
                if (value != null && (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("yes") || value.equals("1"))) {
                    return Optional.of("its JDBC properties set " + key + "=" + value + ". After a reconnect the"
                            + " connection silently works on a new server session that holds none of its named locks."
                            + " Remove " + key + " from "
                            + DataSourceNames.property(dataSourceName, "jdbc.additional-jdbc-properties"));
                }
            }
        }
        return Optional.empty();
    }
}
