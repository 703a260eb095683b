function add(a, b) {
    return a + bla«nk_val»ue;
}
