int add(int a, int b) {
    return a + bla«nk_val»ue;
}
