# Kubernetes overlays rendered offline and validated (npm ci on first run, ~20 s).
add_test(NAME deploy.kubernetes
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/deploy/kubernetes_test.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/deploy-kubernetes $<TARGET_FILE:rdma_exporter>)
set_tests_properties(deploy.kubernetes PROPERTIES LABELS deploy TIMEOUT 600
                                                  ENVIRONMENT "PROMTOOL=${PROMTOOL}")

# systemd unit: systemd-analyze verify and the offline security review.
add_test(NAME deploy.systemd
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/deploy/systemd_test.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:rdma_exporter> ${CMAKE_CURRENT_BINARY_DIR}/deploy-systemd)
set_tests_properties(deploy.systemd PROPERTIES LABELS deploy TIMEOUT 60)

# Debian package (root): cpack, lintian, dpkg -i, run the installed binary, dpkg -r.
add_test(NAME deploy.deb
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/deploy/deb_test.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/deploy-deb)
set_tests_properties(deploy.deb PROPERTIES LABELS deploy TIMEOUT 300 SKIP_RETURN_CODE 77
                                           ENVIRONMENT "CPACK=${CMAKE_CPACK_COMMAND}")
