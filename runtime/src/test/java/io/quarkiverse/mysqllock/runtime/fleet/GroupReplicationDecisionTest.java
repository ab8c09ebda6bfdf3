package io.quarkiverse.mysqllock.runtime.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.quarkiverse.mysqllock.LockMode;
import io.quarkiverse.mysqllock.runtime.fleet.EngineAgreement.Proposal;
import io.quarkiverse.mysqllock.runtime.topology.Topology;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe;
import io.quarkiverse.mysqllock.runtime.topology.TopologyProbe.Reported;

/**
 * MySQL Group Replication in multi-primary mode, decided on the values a MySQL server would report to the probe (issue
 * 44, item 7): every member takes writes and named locks are local to each, as on Galera, so {@code mode=named} is
 * refused and AUTO picks LEASE, also when the user may not read {@code performance_schema}. No MySQL server can be
 * installed on the build machines: the values are MySQL's documented answers, and the probe's statements themselves run
 * against MariaDB in {@code GroupReplicationProbeTest}.
 */
class GroupReplicationDecisionTest {

    private static final String GROUP = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
    /** What MySQL answers a plain user for what it may not read, or does not have (MariaDB's variables). */
    private static final List<String> SKIPPED = List.of("'SELECT @@wsrep_on': Unknown system variable (error 1193, ...)",
            "'SELECT COUNT(*) FROM performance_schema.threads ...': SELECT command denied (error 1142, ...)",
            "'SHOW REPLICAS': Access denied (error 1227, ...)");

    /**
     * A MySQL 8 server's answers: {@code @@read_only}, the group's two variables ({@code @@group_replication_*}, null
     * without the plugin), the ONLINE members and the channels' state (null when performance_schema may not be read).
     */
    private static Reported mysql(String readOnly, String singlePrimaryMode, String groupName, String onlineMembers,
            String channelState) {
        return new Reported(readOnly, null, null, null, null, null, null, null, onlineMembers, channelState, "1",
                singlePrimaryMode, groupName, SKIPPED);
    }

    private static Proposal auto(Topology topology) {
        return SelectingEngine.autoProposal(topology, Optional.empty(), Optional.empty());
    }

    @Test
    void aMultiPrimaryMemberWhoseMembersThePlainUserMayNotReadGetsLease() {
        // before: no sign of replication (performance_schema denied), only the binary-log warning, and AUTO chose NAMED
        Topology topology = TopologyProbe.assess(mysql("0", "0", GROUP, null, null), false);
        assertThat(topology.multiPrimary()).isTrue();
        assertThat(topology.replicated()).isTrue();
        assertThat(topology.unseen()).isNull();
        assertThat(topology.reason()).contains("multi-primary", "group_replication_single_primary_mode=OFF", GROUP,
                "members unread");

        Proposal proposal = auto(topology);
        assertThat(proposal.mode()).isEqualTo(LockMode.LEASE);
        assertThat(proposal.reason()).contains("multi-primary");
        assertThat(proposal.namedImpossible()).as("a fleet running NAMED is not joined")
                .contains("the server is a member of a multi-primary Group Replication group");
        assertThat(SelectingEngine.namedRefusal(topology, Optional.empty())).hasValueSatisfying(
                why -> assertThat(why).contains("multi-primary", "local to each member"));
    }

    @Test
    void aMultiPrimaryMemberWithItsMembersReadIsRefusedForNamedToo() {
        // before: AUTO chose LEASE (online members), but mode=named was accepted
        Topology topology = TopologyProbe.assess(mysql("0", "0", GROUP, "3", "ON"), false);
        assertThat(topology.multiPrimary()).isTrue();
        assertThat(topology.reason()).contains("3 online member(s)");
        assertThat(auto(topology).mode()).isEqualTo(LockMode.LEASE);
        assertThat(SelectingEngine.namedRefusal(topology, Optional.empty())).isPresent();
    }

    @Test
    void theVariablesMayComeAsWordsAndAMemberNotOnlineNowIsStillAMember() {
        for (String off : List.of("OFF", "off", "0", "FALSE")) {
            assertThat(TopologyProbe.multiPrimaryGroup(off, GROUP, null)).as(off).isPresent();
        }
        // recovering, or its group replication stopped: it may be ONLINE while the application runs
        assertThat(TopologyProbe.multiPrimaryGroup("0", GROUP, "0")).isPresent();
        for (String on : List.of("ON", "1", "TRUE")) {
            assertThat(TopologyProbe.multiPrimaryGroup(on, GROUP, "3")).as(on).isEmpty();
        }
    }

    @Test
    void aSinglePrimaryGroupIsReplicationNotMultiPrimary() {
        // its primary: writable, AUTO picks LEASE on its members; NAMED is the user's choice, as on an async primary
        Topology primary = TopologyProbe.assess(mysql("0", "1", GROUP, "3", "ON"), false);
        assertThat(primary.multiPrimary()).isFalse();
        assertThat(primary.reason()).contains("group replication has 3 online member(s)");
        assertThat(auto(primary).mode()).isEqualTo(LockMode.LEASE);
        assertThat(SelectingEngine.namedRefusal(primary, Optional.empty())).isEmpty();
        // a secondary is read-only (super_read_only): refused as any read-only server
        Topology secondary = TopologyProbe.assess(mysql("1", "1", GROUP, "3", "ON"), false);
        assertThat(SelectingEngine.namedRefusal(secondary, Optional.empty())).hasValueSatisfying(
                why -> assertThat(why).contains("read-only"));
    }

    @Test
    void withoutAGroupOrWithoutThePluginNothingChanges() {
        // the plugin loaded, no group configured: single-primary mode is ON by default, the group name empty
        for (Reported reported : List.of(mysql("0", "1", null, null, null), mysql("0", "0", "", null, null),
                mysql("0", null, null, null, null))) {
            Topology topology = TopologyProbe.assess(reported, false);
            assertThat(topology.multiPrimary()).isFalse();
            assertThat(topology.replicated()).isFalse();
            assertThat(topology.unseen()).as("the binary-log warning as before").contains("binary log");
            assertThat(auto(topology).mode()).isEqualTo(LockMode.NAMED);
            assertThat(SelectingEngine.namedRefusal(topology, Optional.empty())).isEmpty();
        }
        // MariaDB: no such variables (error 1193), nothing else either
        Reported mariaDb = new Reported("0", "OFF", "0", null, null, "0", "0", null, null, null, "0", null, null,
                List.of());
        Topology topology = TopologyProbe.assess(mariaDb, true);
        assertThat(topology.multiPrimary()).isFalse();
        assertThat(auto(topology).mode()).isEqualTo(LockMode.NAMED);
    }

    @Test
    void replicationFalseDoesNotHideAMultiPrimaryGroup() {
        Topology configured = TopologyProbe.fromConfiguration(Optional.of(false), Optional.empty()).orElseThrow();
        Topology member = TopologyProbe.withoutReplicationDetection(configured, "0", null, "OFF", GROUP);
        assertThat(member.multiPrimary()).isTrue();
        assertThat(member.reason()).contains("multi-primary", "replication=false does not change that");
        Proposal proposal = auto(member);
        assertThat(proposal.mode()).isEqualTo(LockMode.LEASE);
        assertThat(proposal.reason()).isEqualTo(member.reason());
        assertThat(SelectingEngine.namedRefusal(member, Optional.empty())).isPresent();

        Topology alone = TopologyProbe.withoutReplicationDetection(configured, "0", null, "ON", GROUP);
        assertThat(alone.multiPrimary()).isFalse();
        assertThat(auto(alone).mode()).isEqualTo(LockMode.NAMED);
    }

    @Test
    void galeraStillComesFirstInTheRefusal() {
        Reported both = new Reported("0", "ON", null, null, null, null, null, null, null, null, "1", "0", GROUP,
                List.of());
        Topology topology = TopologyProbe.assess(both, false);
        assertThat(SelectingEngine.namedRefusal(topology, Optional.empty())).hasValueSatisfying(
                why -> assertThat(why).startsWith("the server is a Galera cluster node"));
    }
}
