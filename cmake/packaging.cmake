# Installation beyond the binary (exporter/CMakeLists.txt installs bin/rdma_exporter) and the
# Debian package: `cpack -G DEB` in the build directory makes rdma-exporter_<version>_<arch>.deb
# (tests/deploy/deb_test.sh builds, lints, installs, runs and removes it).
include(GNUInstallDirs)

# systemd unit: /usr/lib/systemd/system in the package (systemd reads it on Debian 12).
install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/rdma_exporter.service
        DESTINATION lib/systemd/system)

# Prometheus rules and Grafana dashboards, as built in dashboards/out (whatever is there when
# CMake configures).
file(GLOB RDMA_EXPORTER_RULES ${CMAKE_SOURCE_DIR}/dashboards/out/*.rules.yaml)
file(GLOB RDMA_EXPORTER_DASHBOARDS ${CMAKE_SOURCE_DIR}/dashboards/out/dashboards/*.json)
install(FILES ${RDMA_EXPORTER_RULES} DESTINATION ${CMAKE_INSTALL_DATADIR}/rdma-exporter/rules)
install(FILES ${RDMA_EXPORTER_DASHBOARDS}
        DESTINATION ${CMAKE_INSTALL_DATADIR}/rdma-exporter/dashboards)

# Debian policy files: copyright, changelog (gzip -9n: reproducible, as lintian wants), README.
set(RDMA_EXPORTER_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/rdma-exporter)
execute_process(COMMAND gzip -9nc ${CMAKE_SOURCE_DIR}/deploy/debian/changelog
                OUTPUT_FILE ${CMAKE_BINARY_DIR}/changelog.gz)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/debian/copyright ${CMAKE_BINARY_DIR}/changelog.gz
              ${CMAKE_SOURCE_DIR}/README.md
        DESTINATION ${RDMA_EXPORTER_DOC_DIR})

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "rdma-exporter")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "rdma_exporter maintainers <maintainers@rdma-exporter.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Prometheus exporter for RDMA fabrics (InfiniBand, RoCE)")
set(CPACK_PACKAGE_DESCRIPTION
    "rdma_exporter reads the state, error and traffic counters of InfiniBand\n\
and RoCE ports (mlx5, rxe) from sysfs, rtnetlink, ethtool and DCB, and\n\
serves them to Prometheus. The package installs the exporter, a hardened\n\
systemd unit (not enabled), and the Prometheus rules and Grafana\n\
dashboards in /usr/share/rdma-exporter.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# Library dependencies from the binary (dpkg-shlibdeps): libcivetweb1, libprometheus-cpp,
# libspdlog, libnl, libibverbs1, ...
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The OpenSSL shims for CivetWeb (exporter/http/tls_shim) are private libraries of the package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib/rdma_exporter)
# The mlx5/rxe verbs providers for the verbs collector.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ibverbs-providers")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus")
include(CPack)
